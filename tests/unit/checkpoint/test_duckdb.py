"""DuckDBCheckpointManager against real DuckDB files (other processes: tests/integration/checkpoint)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint import Checkpoint, CheckpointManager, DuckDBCheckpointManager
from samza_nb.checkpoint.duckdb import FORMAT_MARKER, ensure_schema
from samza_nb.errors import CheckpointError

SSP0 = SystemStreamPartition("kafka", "page-views", 0)
SSP1 = SystemStreamPartition("kafka", "page-views", 1)
SSP2 = SystemStreamPartition("kafka", "clicks", 0)


def run(coro: object) -> object:
    return asyncio.run(coro)  # type: ignore[arg-type]


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "job-1" / "samza.duckdb"


@pytest.fixture
def manager(path: Path) -> Iterator[DuckDBCheckpointManager]:
    m = DuckDBCheckpointManager(path, "job", "1")
    m.register("Partition 0")
    m.register("Partition 1")
    run(m.start())
    yield m
    run(m.stop())


def read(path: Path, task: str, job: tuple[str, str] = ("job", "1")) -> Checkpoint | None:
    async def go() -> Checkpoint | None:
        m = DuckDBCheckpointManager(path, *job)
        await m.start()
        try:
            return await m.read_last_checkpoint(task)
        finally:
            await m.stop()

    result = run(go())
    assert result is None or isinstance(result, Checkpoint)
    return result


def write(path: Path, task: str, checkpoint: Checkpoint) -> None:
    m = DuckDBCheckpointManager(path, "job", "1")
    m.start_sync()
    try:
        m.write_checkpoint_sync(task, checkpoint)
    finally:
        m.stop_sync()


# -- round trip and semantics -------------------------------------------------------------------------


def test_round_trip(manager: DuckDBCheckpointManager, path: Path) -> None:
    assert isinstance(manager, CheckpointManager)
    cp = Checkpoint({SSP0: "41", SSP1: "7", SSP2: "100000000000000000000"}, {"counts": "12"})
    run(manager.write_checkpoint("Partition 0", cp))
    back = run(manager.read_last_checkpoint("Partition 0"))
    assert back == cp
    assert path.is_file()


def test_unknown_task_reads_none_and_empty_checkpoint_is_not_none(manager: DuckDBCheckpointManager) -> None:
    assert run(manager.read_last_checkpoint("Partition 9")) is None
    run(manager.write_checkpoint("Partition 1", Checkpoint()))
    assert run(manager.read_last_checkpoint("Partition 1")) == Checkpoint()


def test_second_write_replaces_the_whole_checkpoint(manager: DuckDBCheckpointManager) -> None:
    run(manager.write_checkpoint("Partition 0", Checkpoint({SSP0: "1", SSP1: "2"}, {"a": "1", "b": "2"})))
    run(manager.write_checkpoint("Partition 0", Checkpoint({SSP0: "5"}, {"b": "3"})))
    assert run(manager.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "5"}, {"b": "3"})
    run(manager.write_checkpoint("Partition 0", Checkpoint()))
    assert run(manager.read_last_checkpoint("Partition 0")) == Checkpoint()


def test_tasks_are_isolated(manager: DuckDBCheckpointManager) -> None:
    run(manager.write_checkpoint("Partition 0", Checkpoint({SSP0: "10"}, {"s": "1"})))
    run(manager.write_checkpoint("Partition 1", Checkpoint({SSP1: "20"})))
    run(manager.write_checkpoint("Partition 0", Checkpoint({SSP0: "11"})))
    assert run(manager.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "11"})
    assert run(manager.read_last_checkpoint("Partition 1")) == Checkpoint({SSP1: "20"})
    # The same SSP checkpointed by two tasks (group-by-SSP regroupings) stays per task.
    run(manager.write_checkpoint("Partition 1", Checkpoint({SSP0: "3"})))
    assert run(manager.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "11"})
    assert run(manager.read_last_checkpoint("Partition 1")) == Checkpoint({SSP0: "3"})


def test_failed_write_keeps_the_previous_checkpoint(manager: DuckDBCheckpointManager) -> None:
    run(manager.write_checkpoint("Partition 0", Checkpoint({SSP0: "1"})))
    with pytest.raises(CheckpointError, match="needs a Checkpoint"):
        run(manager.write_checkpoint("Partition 0", {SSP0: "2"}))  # type: ignore[arg-type]
    assert run(manager.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "1"})


# -- files that must not be used ----------------------------------------------------------------------


def test_corrupt_file_is_refused_and_left_alone(path: Path) -> None:
    path.parent.mkdir(parents=True)
    garbage = bytes(range(256)) * 40
    path.write_bytes(garbage)
    with pytest.raises(CheckpointError) as info:
        run(DuckDBCheckpointManager(path, "job", "1").start())
    assert str(path) in str(info.value)
    assert "not a DuckDB database" in str(info.value)
    assert path.read_bytes() == garbage


def _tables(path: Path) -> set[str]:
    conn = duckdb.connect(str(path))
    try:
        return {row[0] for row in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    finally:
        conn.close()


def test_foreign_duckdb_file_is_refused_and_left_alone(path: Path) -> None:
    path.parent.mkdir(parents=True)
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE sales (id INTEGER, amount DOUBLE)")
    conn.execute("INSERT INTO sales VALUES (1, 2.5)")
    conn.close()
    with pytest.raises(CheckpointError) as info:
        run(DuckDBCheckpointManager(path, "job", "1").start())
    assert str(path) in str(info.value)
    assert "marker" in str(info.value)
    assert _tables(path) == {"sales"}


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [("format", "someone-else", "format marker"), ("version", "2", "version '2'")],
)
def test_other_format_or_version_is_refused(path: Path, key: str, value: str, fragment: str) -> None:
    write(path, "Partition 0", Checkpoint({SSP0: "1"}))  # creates the file
    conn = duckdb.connect(str(path))
    conn.execute("UPDATE samza_nb_meta SET value = ? WHERE key = ?", [value, key])
    conn.close()
    with pytest.raises(CheckpointError) as info:
        read(path, "Partition 0")
    assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_other_jobs_file_is_refused(path: Path) -> None:
    async def write_as_a() -> None:
        m = DuckDBCheckpointManager(path, "job-a", "1")
        await m.start()
        await m.write_checkpoint("Partition 0", Checkpoint({SSP0: "1"}))
        await m.stop()

    run(write_as_a())
    for job in (("job-b", "1"), ("job-a", "2")):
        with pytest.raises(CheckpointError) as info:
            read(path, "Partition 0", job)
        message = str(info.value)
        assert str(path) in message
        assert "'job-a'" in message
        assert repr(job[0]) in message
    assert read(path, "Partition 0", ("job-a", "1")) == Checkpoint({SSP0: "1"})


def test_marker_records_format_version_and_job(manager: DuckDBCheckpointManager, path: Path) -> None:
    rows = dict(manager.connection.execute("SELECT key, value FROM samza_nb_meta").fetchall())
    assert rows["format"] == FORMAT_MARKER
    assert rows["version"] == "1"
    assert (rows["job.name"], rows["job.id"]) == ("job", "1")


# -- lifecycle ----------------------------------------------------------------------------------------


def test_use_before_start_and_after_stop(path: Path) -> None:
    m = DuckDBCheckpointManager(path, "job", "1")
    m.register("Partition 0")
    assert m.registered_tasks == ("Partition 0",)
    with pytest.raises(CheckpointError, match="before start"):
        run(m.read_last_checkpoint("Partition 0"))
    with pytest.raises(CheckpointError, match="before start"):
        run(m.write_checkpoint("Partition 0", Checkpoint()))
    with pytest.raises(CheckpointError, match="before start"):
        _ = m.connection
    assert not path.exists()
    run(m.start())
    with pytest.raises(CheckpointError, match="already started"):
        run(m.start())
    run(m.stop())
    run(m.stop())  # idempotent
    with pytest.raises(CheckpointError, match="after stop"):
        run(m.read_last_checkpoint("Partition 0"))
    with pytest.raises(CheckpointError, match="after stop"):
        run(m.write_checkpoint("Partition 0", Checkpoint()))
    with pytest.raises(CheckpointError, match="stopped"):
        run(m.start())
    with pytest.raises(CheckpointError, match="stopped"):
        m.register("Partition 1")


def test_a_missing_file_is_created_by_the_first_write_and_read_back_after_a_restart(path: Path) -> None:
    m = DuckDBCheckpointManager(path, "job", "1")
    m.register("Partition 0")
    m.start_sync()
    try:
        assert not path.exists()  # a job without checkpoints starts without its file (and DuckDB)
        assert m.read_last_checkpoint_sync("Partition 0") is None
        assert not path.exists()
        m.write_checkpoint_sync("Partition 0", Checkpoint({SSP0: "4"}, {"counts": "2"}))
        assert path.exists()
        assert m.read_last_checkpoint_sync("Partition 0") == Checkpoint({SSP0: "4"}, {"counts": "2"})
    finally:
        m.stop_sync()
    assert read(path, "Partition 0") == Checkpoint({SSP0: "4"}, {"counts": "2"})
    assert read(path, "Partition 1") is None


def test_a_missing_file_is_claimed_while_a_manager_runs(path: Path) -> None:
    first = DuckDBCheckpointManager(path, "job", "1")
    first.start_sync()
    second = DuckDBCheckpointManager(path, "job", "1")
    with pytest.raises(CheckpointError, match="already open in this process") as info:
        second.start_sync()
    assert str(path) in str(info.value)
    first.stop_sync()
    assert not path.exists()
    assert read(path, "Partition 0") is None  # stopped: the claim is released


def test_bad_task_name(manager: DuckDBCheckpointManager) -> None:
    with pytest.raises(CheckpointError, match="task name"):
        run(manager.read_last_checkpoint(""))
    with pytest.raises(CheckpointError, match="task name"):
        manager.register(None)  # type: ignore[arg-type]


def test_in_memory_database() -> None:
    async def go() -> Checkpoint | None:
        m = DuckDBCheckpointManager(":memory:", "job", "1")
        await m.start()
        await m.write_checkpoint("t", Checkpoint({SSP0: "3"}))
        result = await m.read_last_checkpoint("t")
        await m.stop()
        return result

    assert run(go()) == Checkpoint({SSP0: "3"})


# -- sharing the file with stores: caller-managed transactions ----------------------------------------


def test_write_checkpoint_in_a_caller_transaction_commits_with_store_writes(path: Path) -> None:
    path.parent.mkdir(parents=True)
    owner = duckdb.connect(str(path))
    try:
        ensure_schema(owner, str(path), "job", "1")  # the job database is claimed before stores create tables
        owner.execute("CREATE TABLE store_counts (k VARCHAR PRIMARY KEY, v BIGINT)")
        m = DuckDBCheckpointManager(path, "job", "1", connection=owner)
        run(m.start())
        run(m.write_checkpoint("Partition 0", Checkpoint({SSP0: "1"})))

        tx = m.connection.cursor()
        tx.begin()
        tx.execute("INSERT INTO store_counts VALUES ('a', 1)")
        m.write_checkpoint_in(tx, "Partition 0", Checkpoint({SSP0: "2"}, {"counts": "1"}))
        tx.rollback()
        assert run(m.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "1"})
        assert owner.execute("SELECT count(*) FROM store_counts").fetchone() == (0,)

        tx.begin()
        tx.execute("INSERT INTO store_counts VALUES ('a', 1)")
        m.write_checkpoint_in(tx, "Partition 0", Checkpoint({SSP0: "2"}, {"counts": "1"}))
        assert run(m.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "1"})  # not yet committed
        tx.commit()
        tx.close()
        assert run(m.read_last_checkpoint("Partition 0")) == Checkpoint({SSP0: "2"}, {"counts": "1"})

        run(m.stop())
        # The given connection belongs to the caller and stays open.
        assert owner.execute("SELECT v FROM store_counts WHERE k = 'a'").fetchone() == (1,)
        with pytest.raises(CheckpointError, match="after stop"):
            m.write_checkpoint_in(owner, "Partition 0", Checkpoint())
    finally:
        owner.close()
    assert read(path, "Partition 0") == Checkpoint({SSP0: "2"}, {"counts": "1"})
