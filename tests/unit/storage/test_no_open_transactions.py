"""A store's long-lived cursor must not keep a transaction open between commits: DuckDB keeps the undo
buffers of every commit after the oldest open transaction, so a cursor whose last result was read with
``fetchone()`` (never exhausted) made a long job's memory grow with every commit (found by
benchmarks/soak.py: +250 MiB per million messages)."""

from __future__ import annotations

from collections.abc import Callable

import duckdb
import pytest

from samza_nb.storage.duckdb.engine import DuckDBEngine

from .conftest import commit

KEYS = [b"k%05d" % i for i in range(2000)]


def transaction_bytes(conn: duckdb.DuckDBPyConnection) -> int:
    """The bytes DuckDB holds for transactions (undo buffers of commits it cannot clean up yet)."""
    cur = conn.cursor()
    try:
        rows = cur.execute(
            "SELECT memory_usage_bytes FROM duckdb_memory() WHERE tag = 'TRANSACTION'"
        ).fetchall()
    finally:
        cur.close()
    return sum(int(row[0]) for row in rows)


def counted(engine: DuckDBEngine) -> None:
    engine.row_count()  # what the store factory asks at open


def read_one(engine: DuckDBEngine) -> None:
    engine.get(KEYS[1])  # a point read through DuckDB (an unmirrored table), of a row that is there


@pytest.mark.parametrize(
    ("preload", "read"), [(1_000_000, counted), (0, read_one)], ids=["count", "point-read"]
)
def test_commits_after_a_read_leave_no_undo_buffers_behind(
    conn: duckdb.DuckDBPyConnection, preload: int, read: Callable[[DuckDBEngine], None]
) -> None:
    engine = DuckDBEngine(conn, "store__t__p0", store_name="t", preload_max_rows=preload, read_cache_size=0)
    engine.put_all([(key, b"0") for key in KEYS])
    commit(conn, engine)
    read(engine)

    def commits(n: int, start: int) -> None:
        for round_ in range(start, start + n):
            engine.put_all([(key, b"%d" % round_) for key in KEYS])  # every row replaced: undo per commit
            commit(conn, engine)

    commits(10, 1)
    after_10 = transaction_bytes(conn)
    commits(50, 11)
    after_60 = transaction_bytes(conn)
    assert after_60 - after_10 < 2**20, f"undo buffers kept: {after_10:,} → {after_60:,} bytes"
    assert engine.get(KEYS[0]) == b"60"
