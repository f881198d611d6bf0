"""StateFile: store writes and offsets commit together or not at all; one validator for every reader."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import duckdb
import pytest

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint.duckdb import DuckDBCheckpointManager
from samza_nb.config import Config
from samza_nb.errors import CheckpointError
from samza_nb.storage import query_store
from samza_nb.storage.duckdb.engine import DuckDBEngine
from samza_nb.storage.duckdb.job_files import partition_state_path, state_directory
from samza_nb.storage.duckdb.state_file import StateFile, TaskOffsets
from samza_nb.storage.engine import StorageEngine

from .conftest import table_rows

SSP = SystemStreamPartition("kafka", "in", 0)
TASK = "Partition 0"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "job-1" / "stores" / "partition-0.duckdb"


@pytest.fixture
def state(path: Path) -> Iterator[StateFile]:
    file = StateFile(path, "job", "1")
    file.open()
    yield file
    file.close()


def engine_on(file: StateFile) -> DuckDBEngine:
    return DuckDBEngine(file.connection.cursor(), "store__counts__p0", store_name="counts")


def reread(path: Path) -> tuple[TaskOffsets | None, dict[bytes, bytes]]:
    """What a new process would find in the file: the offsets and the store's rows."""
    file = StateFile(path, "job", "1")
    file.open()
    try:
        return file.read_offsets(TASK), table_rows(file.connection, "store__counts__p0")
    finally:
        file.close()


def test_a_commit_writes_store_rows_and_offsets_together(state: StateFile, path: Path) -> None:
    assert state.read_offsets(TASK) is None
    engine = engine_on(state)
    engine.put(b"a", b"1")
    with state.transaction() as tx:
        tx.write_store(engine)
        tx.write_offsets(TASK, {SSP: "5"}, {"counts": "7"})
    assert engine.pending_count() == 0
    assert state.read_offsets(TASK) == TaskOffsets({SSP: "5"}, {"counts": "7"})
    engine.close()
    state.close()
    assert reread(path) == (TaskOffsets({SSP: "5"}, {"counts": "7"}), {b"a": b"1"})


def test_a_failure_rolls_back_both_and_the_engine_keeps_its_writes(state: StateFile, path: Path) -> None:
    engine = engine_on(state)
    engine.put(b"a", b"1")
    with state.transaction() as tx:
        tx.write_store(engine)
        tx.write_offsets(TASK, {SSP: "5"}, {})
    engine.put(b"b", b"2")
    failing = pytest.raises(CheckpointError, match=rf"{path}.*offsets of task 'Partition 0'")
    with failing, state.transaction() as tx:
        tx.write_store(engine)
        tx.write_offsets(TASK, {SSP: None}, {})  # type: ignore[dict-item]  # NOT NULL: the write fails
    assert state.read_offsets(TASK) == TaskOffsets({SSP: "5"}, {})
    assert table_rows(state.connection, "store__counts__p0") == {b"a": b"1"}
    assert engine.pending_count() == 1, "the failed commit's write is pending again"
    assert engine.get(b"b") == b"2"
    with pytest.raises(RuntimeError, match="task failed"), state.transaction() as tx:
        tx.write_store(engine)
        raise RuntimeError("task failed")
    assert engine.pending_count() == 1
    with state.transaction() as tx:
        tx.write_store(engine)
        tx.write_offsets(TASK, {SSP: "9"}, {})
    engine.close()
    state.close()
    assert reread(path) == (TaskOffsets({SSP: "9"}, {}), {b"a": b"1", b"b": b"2"})


class CountingEngine:
    """Another StorageEngine: keeps its committed rows in a table of its own, one count per commit."""

    def __init__(self) -> None:
        self.pending: dict[bytes, bytes | None] = {}
        self.outcomes: list[str] = []

    def write_pending(self, conn: duckdb.DuckDBPyConnection) -> int:
        conn.execute("CREATE TABLE IF NOT EXISTS counting (n INTEGER)")
        conn.execute("INSERT INTO counting VALUES (?)", [len(self.pending)])
        return len(self.pending)

    def mark_committed(self) -> None:
        self.outcomes.append("committed")
        self.pending.clear()

    def discard_pending_failed(self) -> None:
        self.outcomes.append("discarded")

    def restore_batch(self, pairs: Iterable[tuple[bytes, bytes | None]]) -> None:
        self.pending.update(pairs)

    def truncate(self) -> None:
        self.pending.clear()

    def close(self) -> None:
        self.pending.clear()


def test_the_transaction_drives_any_storage_engine(state: StateFile) -> None:
    duckdb_engine: StorageEngine = engine_on(state)
    assert isinstance(duckdb_engine, StorageEngine)
    engine = CountingEngine()
    assert isinstance(engine, StorageEngine)
    engine.restore_batch([(b"a", b"1"), (b"b", None)])
    with pytest.raises(RuntimeError, match="task failed"), state.transaction() as tx:
        tx.write_store(engine)
        raise RuntimeError("task failed")
    with state.transaction() as tx:
        tx.write_store(engine)
        tx.write_offsets(TASK, {SSP: "5"}, {})
    assert engine.outcomes == ["discarded", "committed"]
    assert state.connection.execute("SELECT n FROM counting").fetchall() == [(2,)]


def test_use_outside_open_and_close_is_refused(path: Path) -> None:
    file = StateFile(path, "job", "1")
    with pytest.raises(CheckpointError, match="not open yet"):
        file.read_offsets(TASK)
    file.open()
    file.close()
    with pytest.raises(CheckpointError, match="closed"):
        file.transaction().__enter__()


def test_paths_follow_the_job_directory(tmp_path: Path) -> None:
    config = Config({"job.logged.store.base.dir": str(tmp_path), "job.name": "pv", "job.id": "3"})
    assert state_directory(config) == tmp_path / "pv-3" / "stores"
    assert partition_state_path(config, 2) == tmp_path / "pv-3" / "stores" / "partition-2.duckdb"


# -- one validator: the stores' file, the checkpoint manager and SQL reads refuse alike ------------------


def _refusal(open_it: object) -> str:
    with pytest.raises(CheckpointError) as info:
        open_it()  # type: ignore[operator]
    return str(info.value)


def test_a_foreign_file_is_refused_with_the_same_message_by_every_reader(tmp_path: Path) -> None:
    foreign = tmp_path / "foreign.duckdb"
    other = duckdb.connect(str(foreign))
    other.execute("CREATE TABLE invoices (id INTEGER)")
    other.close()
    by_state_file = _refusal(lambda: StateFile(foreign, "job", "1").open())
    by_checkpoints = _refusal(lambda: DuckDBCheckpointManager(foreign, "job", "1").start_sync())
    by_sql = _refusal(lambda: query_store(foreign, "counts"))
    assert by_state_file == by_checkpoints == by_sql
    assert str(foreign) in by_sql
    assert "without the samza_nb marker" in by_sql


def test_another_jobs_file_is_refused_with_the_same_message_by_every_reader(path: Path) -> None:
    file = StateFile(path, "job-a", "1")
    file.open()
    file.close()
    by_state_file = _refusal(lambda: StateFile(path, "job-b", "1").open())
    by_sql = _refusal(lambda: query_store(path, "counts", config=Config({"job.name": "job-b"})))
    assert by_state_file == by_sql
    assert "'job-a'" in by_sql
