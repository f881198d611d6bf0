"""One key's committed value in a job database: what ``%samza_get --committed`` reads."""

from __future__ import annotations

import contextlib

import duckdb

from samza_nb.storage.duckdb.job_files import quote_ident
from samza_nb.storage.duckdb.tables import read_catalogue


def committed_value(
    connection: duckdb.DuckDBPyConnection, store: str, partition: int, key: bytes
) -> bytes | None:
    """The value bytes ``key`` (serialized) had in partition ``partition`` of ``store`` at the last commit
    of the database behind ``connection``; None when it had none (never written, deleted, or the store
    has no such partition here). Reads in its own read transaction on its own cursor (never waits for
    the job's writer) and changes nothing."""
    cur = connection.cursor()
    try:
        cur.begin()
        try:
            table = next((p.table_name for p in read_catalogue(cur, store) if p.partition == partition), None)
            if table is None:
                return None
            row = cur.execute(f"SELECT v FROM {quote_ident(table)} WHERE k = ?", [key]).fetchone()
            return None if row is None else bytes(row[0])
        finally:
            with contextlib.suppress(duckdb.Error):
                cur.rollback()
    finally:
        cur.close()


__all__ = ["committed_value"]
