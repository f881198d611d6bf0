"""Files the job writes are never world-writable, even under umask 000."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.storage.duckdb.job_files import close_database, open_database
from samza_nb.storage.duckdb.state_file import StateFile
from samza_nb.systems.log import DurableLog


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_state_file_is_not_world_writable_under_umask_000(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "state" / "job.duckdb"
    conn = open_database(str(path))
    conn.execute("CREATE TABLE t (i INTEGER)")
    close_database(conn)
    assert not path.stat().st_mode & stat.S_IWOTH


def test_state_file_keeps_a_stricter_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        path = tmp_path / "job.duckdb"
        close_database(open_database(str(path)))
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


def test_the_state_files_write_ahead_log_is_not_world_writable(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "stores" / "partition-0.duckdb"
    file = StateFile(path, "job", "1")
    file.open()
    try:
        ssp = SystemStreamPartition("log", "in", 0)
        for offset in range(3):
            with file.transaction() as tx:
                tx.write_offsets("Partition 0", {ssp: str(offset)}, {})
            wal = Path(f"{path}.wal")
            assert wal.exists()
            assert not wal.stat().st_mode & stat.S_IWOTH, oct(wal.stat().st_mode)
    finally:
        file.close()


def test_durable_log_files_are_not_world_writable(tmp_path: Path, open_umask: None) -> None:
    log = DurableLog(tmp_path / "log")
    log.create_stream("s", 1)
    log.append("s", 0, [b"v"], [b"k"])
    log.flush()
    written = [p for p in (tmp_path / "log").rglob("*") if p.is_file()]
    assert written
    for p in written:
        assert not p.stat().st_mode & stat.S_IWOTH, (p, oct(p.stat().st_mode))
