"""Fixtures for the store tests: a real DuckDB job database, engines and the layered stores over them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from samza_nb.storage.duckdb.engine import DuckDBEngine
from samza_nb.storage.duckdb.job_files import ensure_schema


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "job-1" / "samza.duckdb"


@pytest.fixture
def conn(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a fresh job database file (job.name=job, job.id=1)."""
    db_path.parent.mkdir(parents=True, exist_ok=True)
    connection = duckdb.connect(str(db_path))
    ensure_schema(connection, str(db_path), "job", "1")
    yield connection
    connection.close()


def commit(conn: duckdb.DuckDBPyConnection, *engines: DuckDBEngine) -> None:
    """What the StorageManager does at commit: write every engine's pending changes in one transaction."""
    cur = conn.cursor()
    try:
        cur.begin()
        try:
            for engine in engines:
                engine.write_pending(cur)
            cur.commit()
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a failed COMMIT has already ended the transaction
                cur.rollback()
            for engine in engines:
                engine.discard_pending_failed()
            raise
        for engine in engines:
            engine.mark_committed()
    finally:
        cur.close()


def table_rows(conn: duckdb.DuckDBPyConnection, table: str) -> dict[bytes, bytes]:
    """The committed rows of ``table``, read by a cursor of its own."""
    cur = conn.cursor()
    try:
        return dict(cur.execute(f'SELECT k, v FROM "{table}"').fetchall())
    finally:
        cur.close()
