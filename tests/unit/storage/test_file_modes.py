"""Files the job writes are never world-writable, even under umask 000."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from samza_nb.storage.job_files import open_database


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_state_file_is_not_world_writable_under_umask_000(tmp_path: Path, open_umask: None) -> None:
    path = tmp_path / "state" / "job.duckdb"
    conn = open_database(str(path))
    conn.execute("CREATE TABLE t (i INTEGER)")
    conn.close()
    assert not path.stat().st_mode & stat.S_IWOTH


def test_state_file_keeps_a_stricter_umask(tmp_path: Path) -> None:
    previous = os.umask(0o077)
    try:
        path = tmp_path / "job.duckdb"
        open_database(str(path)).close()
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0
