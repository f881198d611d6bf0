"""Pooled DuckDB instances: a job file opened for writing is attached to a reused instance (that other
processes see it released on close: tests/integration/storage/test_instances_processes.py)."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.checkpoint.duckdb import DuckDBCheckpointManager
from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb import instances
from samza_nb.storage.duckdb.job_files import close_database, open_database
from samza_nb.storage.duckdb.open_errors import UnusableStateFileError


def test_a_cursor_left_over_from_a_closed_file_fails_and_never_reaches_the_next(tmp_path: Path) -> None:
    conn = open_database(str(tmp_path / "a.duckdb"))
    conn.execute("CREATE TABLE t (x INTEGER)")
    leftover = conn.cursor()
    close_database(conn)
    following = open_database(str(tmp_path / "b.duckdb"))
    following.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(duckdb.Error, match="closed|detached"):
        leftover.execute("INSERT INTO t VALUES (1)")
    assert following.execute("SELECT count(*) FROM t").fetchone() == (0,)
    close_database(following)


def test_a_file_open_in_this_process_is_refused_naming_it(tmp_path: Path) -> None:
    path = str(tmp_path / "a.duckdb")
    conn = open_database(path)
    try:
        for read_only in (False, True):
            with pytest.raises(CheckpointError, match="already open in this process") as info:
                open_database(path, read_only=read_only)
            assert path in str(info.value)
    finally:
        close_database(conn)
    close_database(open_database(path))  # and once closed, it opens


def test_a_failed_open_names_the_file_and_keeps_the_instance(tmp_path: Path) -> None:
    close_database(open_database(str(tmp_path / "warm.duckdb")))
    idle = instances.idle_count()
    bad = tmp_path / "stores" / "partition-0.duckdb"
    bad.parent.mkdir()
    bad.write_bytes(b"not a database" * 1000)
    with pytest.raises(UnusableStateFileError, match="not a DuckDB database"):
        open_database(str(bad))
    assert instances.idle_count() == idle


def test_the_checkpoint_managers_connection_is_handed_out(tmp_path: Path) -> None:
    manager = DuckDBCheckpointManager(str(tmp_path / "samza.duckdb"), "job", "1")
    manager.start_sync()
    manager.write_checkpoint_sync("Partition 0", Checkpoint())  # (a new file is opened at the first write)
    idle = instances.idle_count()
    manager.connection.execute("SELECT 1")
    manager.stop_sync()
    assert instances.idle_count() == idle, "the manager's instance was not put in the pool"
