"""Pooled DuckDB instances seen from other processes: a file closed (or dropped) is released and durable,
a forked child takes no instance of its parent's, and an instance handed out is closed with its file."""

from __future__ import annotations

import gc
import multiprocessing
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from samza_nb.storage.duckdb import instances
from samza_nb.storage.duckdb.job_files import close_database, hand_out, open_database
from tests.requirements import require


def _count_in_another_process(path: Path) -> int:
    """Open the file in a fresh process (which needs its lock) and count the rows of ``t``."""
    code = (
        f"import duckdb; print(duckdb.connect({str(path)!r}).execute('SELECT count(*) FROM t').fetchone()[0])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout)


def test_a_closed_file_is_released_durable_and_its_instance_reused(tmp_path: Path) -> None:
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    conn = open_database(str(first))
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.cursor().execute("INSERT INTO t VALUES (1), (2)")  # a cursor works on the file, like connect()'s
    close_database(conn)
    idle = instances.idle_count()
    assert idle >= 1, "the instance went back to the pool"
    assert not (tmp_path / "a.duckdb.wal").exists(), "detaching checkpointed the file"
    assert _count_in_another_process(first) == 2, "the lock is released and the rows are there"

    again = open_database(str(second))
    assert instances.idle_count() == idle - 1, "the next file took the idle instance"
    again.execute("CREATE TABLE t (x INTEGER)")
    assert again.execute("SELECT count(*) FROM t").fetchone() == (0,), "nothing of the first file"
    close_database(again)


def test_a_connection_dropped_without_closing_releases_its_file(tmp_path: Path) -> None:
    path = tmp_path / "a.duckdb"
    conn = open_database(str(path))
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute("INSERT INTO t VALUES (1)")
    del conn
    gc.collect()
    assert _count_in_another_process(path) == 1


def _child_writes(path: str) -> None:
    conn = open_database(path)
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.execute("INSERT INTO t VALUES (7)")
    close_database(conn)


def test_a_forked_child_uses_instances_of_its_own(tmp_path: Path) -> None:
    close_database(open_database(str(tmp_path / "warm.duckdb")))  # the parent has an idle instance
    idle = instances.idle_count()
    held = open_database(str(tmp_path / "held.duckdb"))  # and one attached to a file
    child = multiprocessing.get_context("fork").Process(
        target=_child_writes, args=(str(tmp_path / "c.duckdb"),)
    )
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert _count_in_another_process(tmp_path / "c.duckdb") == 1
    held.execute("CREATE TABLE t (x INTEGER)")  # the parent's instances are untouched
    close_database(held)
    assert instances.idle_count() >= idle


def test_a_connection_handed_out_takes_its_instance_with_it(tmp_path: Path) -> None:
    close_database(open_database(str(tmp_path / "warm.duckdb")))
    idle = instances.idle_count()
    require("numpy", "DuckDB's create_function needs numpy (the dev extra installs it)")
    conn = hand_out(open_database(str(tmp_path / "a.duckdb")))
    conn.create_function("plus_one", lambda x: x + 1, ["BIGINT"], "BIGINT")  # lives on the instance
    conn.execute("SET GLOBAL threads = 1")
    assert conn.execute("SELECT plus_one(1)").fetchone() == (2,)
    close_database(conn)
    assert instances.idle_count() == idle - 1, "its instance was closed, not pooled"
    following = open_database(str(tmp_path / "b.duckdb"))
    try:
        with pytest.raises(duckdb.Error, match="plus_one"):
            following.execute("SELECT plus_one(1)")
        assert following.execute("SELECT current_setting('threads')").fetchone() != (1,)
    finally:
        close_database(following)
    assert _count_in_another_process_or_none(tmp_path / "a.duckdb") == 0


def _count_in_another_process_or_none(path: Path) -> int:
    code = f"import duckdb; print(len(duckdb.connect({str(path)!r}).execute('SHOW TABLES').fetchall()))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return int(out.stdout)
