"""A job database that cannot be opened is one CheckpointError naming the file and saying what to do:
truncated (wherever the cut falls) or not DuckDB (in use by a live process:
tests/integration/storage/test_unusable_files_processes.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb.storage.duckdb.open_errors import UnusableStateFileError
from samza_nb.storage.duckdb.state_file import StateFile, TaskOffsets
from samza_nb.storage.restore_state import use_up_a_copy

pytestmark = pytest.mark.faults

CUTS = [0.999, 0.9, 0.75, 0.5, 0.25, 0.01]


def state_file(tmp_path: Path, name: str = "stores/partition-3.duckdb") -> Path:
    """A job database at ``name`` with some committed data in a table of its own (several blocks)."""
    path = tmp_path / "job-1" / name
    file = StateFile(path, "job", "1")
    file.open()
    try:
        with file.transaction() as tx:
            tx.connection.execute(
                "CREATE TABLE store__t AS SELECT range AS k, md5(range::VARCHAR) AS v FROM range(200000)"
            )
            tx.write_offsets("Partition 3", {}, {"t": "7"})
    finally:
        file.close()
    return path


def open_file(path: Path) -> StateFile:
    file = StateFile(path, "job", "1")
    try:
        file.open()
    except BaseException:
        file.close()
        raise
    return file


@pytest.mark.parametrize("cut", CUTS)
def test_a_truncated_state_file_is_unusable_wherever_the_cut_falls(tmp_path: Path, cut: float) -> None:
    path = state_file(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(UnusableStateFileError) as info:
        open_file(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"job database {path} cannot be used: it is ")
    assert "samza-nb run --restore-state" in message and f"delete {path}" in message
    assert info.value.state_file and info.value.path == str(path)
    assert len(path.read_bytes()) == int(len(data) * cut)  # left alone


def test_a_good_file_opens_after_a_crash_freed_blocks_at_its_end(tmp_path: Path) -> None:
    """Free blocks at the end of a file are cut off by DuckDB itself: not mistaken for truncation."""
    path = state_file(tmp_path)
    file = open_file(path)
    with file.transaction() as tx:
        tx.connection.execute("DROP TABLE store__t")
    file.close()
    file = open_file(path)
    assert file.read_offsets("Partition 3") == TaskOffsets({}, {"t": "7"})
    file.close()


@pytest.mark.parametrize("content", [b"", b"not a database\n" * 500, bytes(64 * 1024)])
def test_a_state_file_that_is_not_duckdb_is_unusable(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "job-1" / "stores" / "partition-0.duckdb"
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.raises(UnusableStateFileError, match="is not a DuckDB database") as info:
        open_file(path)
    assert "--restore-state" in str(info.value) and path.read_bytes() == content


def test_the_checkpoint_file_names_the_deletion_and_what_the_job_resumes_from(tmp_path: Path) -> None:
    path = state_file(tmp_path, "samza.duckdb")
    wal = path.with_name("samza.duckdb.wal")
    wal.write_bytes(b"")
    path.write_bytes(path.read_bytes()[:5000])
    with pytest.raises(UnusableStateFileError) as info:
        open_file(path)
    message = str(info.value)
    assert f"Delete {path} and {wal} (or move it away)" in message
    assert "--restore-state" not in message and not info.value.state_file


def test_every_damaged_block_is_found_on_open_or_by_restore_states_check_or_is_never_read(
    tmp_path: Path,
) -> None:
    """64 flipped bytes in any block: opening the file finds it (DuckDB's checksum error, which says "in
    block at location ...", never read as a lock), or else :func:`use_up_a_copy` does (some blocks, like
    a primary key's index, are read only when keys are removed at a commit), or else the bytes are never
    read (padding of a block shared by small tables): the job's reads and commits then work. The file is
    never changed by the check and no scratch copy is left."""
    path = state_file(tmp_path)
    good = path.read_bytes()
    use_up_a_copy(path)  # a good file passes
    assert path.read_bytes() == good and sorted(p.name for p in path.parent.iterdir()) == [path.name]
    blocks = (len(good) - 12288) // 262144
    found: dict[str, list[int]] = {"on open": [], "by the check": [], "never read": []}
    for block in range(blocks):
        data = bytearray(good)
        start = 12288 + block * 262144 + 64
        data[start : start + 64] = bytes(b ^ 0xFF for b in data[start : start + 64])
        path.write_bytes(bytes(data))
        try:
            open_file(path).close()
        except UnusableStateFileError as exc:
            assert f"job database {path} cannot be used: it is damaged (" in str(exc)
            assert "--restore-state" in str(exc)
            found["on open"].append(block)
            continue
        try:
            use_up_a_copy(path)
        except UnusableStateFileError as exc:
            assert f"job database {path} cannot be used: it is damaged (" in str(exc)
            found["by the check"].append(block)
        else:
            file = open_file(path)
            try:
                assert file.read_offsets("Partition 3") == TaskOffsets({}, {"t": "7"})
                with file.transaction() as tx:
                    tx.connection.execute("DELETE FROM store__t WHERE k % 2 = 0")
                    tx.write_offsets("Partition 3", {}, {"t": "8"})
            finally:
                file.close()
            found["never read"].append(block)
        assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert found["on open"] and found["by the check"], found
    assert len(found["never read"]) < blocks // 4, found
