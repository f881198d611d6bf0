"""DuckDBEngine: pending writes, the commit protocol, the mirror and reads through DuckDB."""

from __future__ import annotations

import random
import threading
from typing import Any

import duckdb
import pytest

from samza_nb.storage import StoreError
from samza_nb.storage.duckdb.engine import DuckDBEngine

from .conftest import commit, table_rows


class RecordingConnection:
    """Delegates to a DuckDB cursor and records the statements executed through it."""

    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self._cur = cur
        self.statements: list[str] = []

    def execute(self, sql: str, *args: Any) -> Any:
        self.statements.append(sql)
        return self._cur.execute(sql, *args)

    def register(self, name: str, table: Any) -> Any:
        return self._cur.register(name, table)

    def unregister(self, name: str) -> Any:
        return self._cur.unregister(name)


def engine_of(conn: duckdb.DuckDBPyConnection, table: str = "store__t__p0", **kwargs: Any) -> DuckDBEngine:
    return DuckDBEngine(conn, table, store_name="t", **kwargs)


def test_writes_stay_pending_until_committed(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put(b"a", b"1")
    engine.put(b"b", b"2")
    engine.delete(b"c")
    assert engine.pending == {b"a": b"1", b"b": b"2", b"c": None}
    assert table_rows(conn, "store__t__p0") == {}
    commit(conn, engine)
    assert engine.pending == {}
    assert table_rows(conn, "store__t__p0") == {b"a": b"1", b"b": b"2"}
    assert engine.get(b"a") == b"1"


def write_recorded(conn: duckdb.DuckDBPyConnection, engine: DuckDBEngine, changes: int) -> list[str]:
    """Commit ``engine``'s pending writes (``changes`` of them); the statements they took."""
    cur = conn.cursor()
    recorder = RecordingConnection(cur)
    cur.begin()
    assert engine.write_pending(recorder) == changes  # type: ignore[arg-type]
    cur.commit()
    engine.mark_committed()
    return [
        statement.split(" INTO ")[0].split(" WHERE ")[0].split(" FROM ")[0]
        for statement in recorder.statements
    ]


def test_write_pending_inserts_new_keys_upserts_known_ones_and_deletes_in_one_statement_each(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    engine = engine_of(conn)
    engine.put_all([(b"k%d" % i, b"v") for i in range(1000)])
    assert write_recorded(conn, engine, 1000) == ["INSERT"], "a new table: every key is new"
    engine.put_all([(b"k%d" % i, b"w") for i in range(500, 1500)])
    engine.delete_all([b"k%d" % i for i in range(10)])
    assert write_recorded(conn, engine, 1010) == ["INSERT", "INSERT OR REPLACE", "DELETE"]
    engine.put_all([(b"k%d" % i, b"x") for i in range(1400, 1500)])
    assert write_recorded(conn, engine, 100) == ["INSERT OR REPLACE"], "known keys only"
    rows = table_rows(conn, "store__t__p0")
    assert len(rows) == 1490
    assert rows[b"k600"] == b"w"
    assert rows[b"k1450"] == b"x"
    assert rows[b"k100"] == b"v"
    assert b"k5" not in rows


def test_without_a_mirror_every_put_is_an_upsert(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn, preload_max_rows=0)
    assert not engine.mirrored
    engine.put_all([(b"a", b"1"), (b"b", b"1")])
    assert write_recorded(conn, engine, 2) == ["INSERT OR REPLACE"]
    engine.put_all([(b"a", b"2"), (b"c", b"2")])
    assert write_recorded(conn, engine, 2) == ["INSERT OR REPLACE"], "which keys the table has is unknown"
    assert table_rows(conn, "store__t__p0") == {b"a": b"2", b"b": b"1", b"c": b"2"}


def test_after_a_truncate_every_put_is_a_plain_insert(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put_all([(b"a", b"1"), (b"b", b"1")])
    commit(conn, engine)
    engine.truncate()
    engine.put_all([(b"a", b"2"), (b"c", b"2")])
    assert write_recorded(conn, engine, 2) == ["DELETE", "INSERT"]
    assert table_rows(conn, "store__t__p0") == {b"a": b"2", b"c": b"2"}


def test_rollback_keeps_pending_for_the_retry(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put(b"a", b"1")
    engine.put(b"b", b"1")
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)
    engine.put(b"b", b"2")  # written while the commit is under way
    engine.put(b"c", b"2")
    assert engine.get(b"a") == b"1", "reads see the batch being written"
    cur.rollback()
    engine.discard_pending_failed()
    assert table_rows(conn, "store__t__p0") == {}
    assert engine.pending == {b"a": b"1", b"b": b"2", b"c": b"2"}, "the newer write wins"
    assert engine.get(b"b") == b"2"
    commit(conn, engine)
    assert table_rows(conn, "store__t__p0") == {b"a": b"1", b"b": b"2", b"c": b"2"}


def test_writes_during_a_commit_stay_pending_for_the_next(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put(b"a", b"1")
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)
    engine.put(b"a", b"2")
    engine.delete(b"x")
    cur.commit()
    engine.mark_committed()
    assert table_rows(conn, "store__t__p0") == {b"a": b"1"}
    assert engine.pending == {b"a": b"2", b"x": None}
    assert engine.get(b"a") == b"2"


def test_a_failing_write_pending_can_be_discarded(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put(b"a", b"1")
    cur = conn.cursor()
    cur.begin()
    cur.execute('DROP TABLE "store__t__p0"')  # make the upsert fail inside the transaction
    with pytest.raises(StoreError, match=r"store 't'.*writing 1 changes"):
        engine.write_pending(cur)
    cur.rollback()
    engine.discard_pending_failed()
    assert engine.pending == {b"a": b"1"}
    commit(conn, engine)
    assert table_rows(conn, "store__t__p0") == {b"a": b"1"}


def test_commit_protocol_misuse_is_an_error(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    with pytest.raises(StoreError, match="mark_committed"):
        engine.mark_committed()
    engine.discard_pending_failed()  # nothing under way: a no-op
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)
    with pytest.raises(StoreError, match="called again"):
        engine.write_pending(cur)
    with pytest.raises(StoreError, match="truncate"):
        engine.truncate()
    cur.rollback()
    engine.discard_pending_failed()


def test_an_empty_commit_is_harmless(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    commit(conn, engine)
    assert engine.row_count() == 0


def test_open_loads_the_table_into_the_mirror(conn: duckdb.DuckDBPyConnection) -> None:
    first = engine_of(conn)
    first.put_all([(b"k%d" % i, b"v%d" % i) for i in range(100)])
    first.delete(b"k5")
    commit(conn, first)
    first.close()
    second = engine_of(conn)
    assert second.mirrored
    assert second.row_count() == 99
    second._cur.close()  # reads must not need DuckDB any more
    assert second.get(b"k7") == b"v7"
    assert second.get(b"k5") is None
    assert second.get_all([b"k1", b"k5"]) == {b"k1": b"v1"}
    assert len(list(second.all())) == 99


def test_a_large_table_is_read_through_duckdb(conn: duckdb.DuckDBPyConnection) -> None:
    writer = engine_of(conn)
    writer.put_all([(b"k%03d" % i, b"v%d" % i) for i in range(50)])
    commit(conn, writer)
    writer.close()
    engine = engine_of(conn, preload_max_rows=10, read_cache_size=5)
    assert not engine.mirrored
    assert engine.get(b"k007") == b"v7"
    assert engine.get(b"nope") is None
    assert engine.get_all([b"k001", b"k002", b"nope", b"k049"]) == {
        b"k001": b"v1",
        b"k002": b"v2",
        b"k049": b"v49",
    }
    assert [k for k, _ in engine.range(b"k010", b"k013")] == [b"k010", b"k011", b"k012"]
    engine.put(b"k007", b"new")
    commit(conn, engine)
    assert engine.get(b"k007") == b"new", "the read cache follows commits"


def test_the_mirror_is_dropped_when_the_table_outgrows_the_preload_limit(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    engine = engine_of(conn, preload_max_rows=10)
    assert engine.mirrored
    engine.put_all([(b"k%d" % i, b"v") for i in range(11)])
    commit(conn, engine)
    assert not engine.mirrored
    assert engine.get(b"k3") == b"v"
    assert len(engine.snapshot()) == 11


@pytest.mark.parametrize("preload", [1_000_000, 0])
def test_mirrored_and_unmirrored_engines_agree(conn: duckdb.DuckDBPyConnection, preload: int) -> None:
    rand = random.Random(3)
    engines = [engine_of(conn, "store__a__p0"), engine_of(conn, "store__b__p0", preload_max_rows=preload)]
    keys = [bytes([rand.randrange(256), rand.randrange(4)]) for _ in range(200)]
    for step in range(2000):
        key = rand.choice(keys)
        action = rand.random()
        for engine in engines:
            if action < 0.5:
                engine.put(key, b"%d" % step)
            elif action < 0.65:
                engine.delete(key)
        if action > 0.97:
            commit(conn, *engines)
        if step % 97 == 0:
            low, high = sorted(rand.sample(keys, 2))
            results = [
                (e.get(key), e.get_all(keys[:20]), list(e.range(low, high)), e.snapshot()) for e in engines
            ]
            assert results[0] == results[1]
    commit(conn, *engines)
    assert table_rows(conn, "store__a__p0") == table_rows(conn, "store__b__p0")


def test_range_overlays_pending_changes_in_byte_order(conn: duckdb.DuckDBPyConnection) -> None:
    for preload in (1_000_000, 0):
        table = f"store__o{preload}__p0"
        engine = engine_of(conn, table, preload_max_rows=preload)
        engine.put_all([(b"b", b"1"), (b"d", b"1"), (b"f", b"1")])
        commit(conn, engine)
        engine.delete(b"d")
        engine.put(b"a", b"2")
        engine.put(b"e", b"2")
        engine.put(b"f", b"2")
        engine.put(b"\xff", b"2")
        expected = [(b"a", b"2"), (b"b", b"1"), (b"e", b"2"), (b"f", b"2"), (b"\xff", b"2")]
        assert list(engine.all()) == expected
        assert list(engine.range(b"b", b"f")) == [(b"b", b"1"), (b"e", b"2")]


def test_iterators_are_snapshots(conn: duckdb.DuckDBPyConnection) -> None:
    for preload in (1_000_000, 0):
        engine = engine_of(conn, f"store__s{preload}__p0", preload_max_rows=preload)
        engine.put_all([(b"a", b"1"), (b"b", b"1")])
        commit(conn, engine)
        entries = engine.all()
        engine.put(b"a", b"2")
        engine.delete(b"b")
        commit(conn, engine)
        assert list(entries) == [(b"a", b"1"), (b"b", b"1")]


def test_restore_batch_applies_changelog_records(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put(b"gone", b"x")
    commit(conn, engine)
    engine.restore_batch([(b"a", b"1"), (b"b", b"1"), (b"a", b"2"), (b"gone", None), (b"b", None)])
    assert engine.get(b"a") == b"2"
    assert engine.get(b"gone") is None
    commit(conn, engine)
    assert table_rows(conn, "store__t__p0") == {b"a": b"2"}
    with pytest.raises(StoreError, match="restore_batch"):
        engine.restore_batch([(b"ok", b"1"), ("text", b"1")])  # type: ignore[list-item]
    assert engine.pending == {}, "an invalid batch applies nothing"


def test_truncate_empties_the_store_at_the_next_commit(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn, preload_max_rows=0)
    engine.put_all([(b"a", b"1"), (b"b", b"1")])
    commit(conn, engine)
    engine.truncate()
    assert engine.get(b"a") is None
    assert list(engine.all()) == []
    engine.restore_batch([(b"c", b"3")])
    commit(conn, engine)
    assert table_rows(conn, "store__t__p0") == {b"c": b"3"}
    assert list(engine.all()) == [(b"c", b"3")]


def test_truncate_survives_a_failed_commit(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.put(b"a", b"1")
    commit(conn, engine)
    engine.truncate()
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)
    cur.rollback()
    engine.discard_pending_failed()
    assert table_rows(conn, "store__t__p0") == {b"a": b"1"}
    assert engine.get(b"a") is None
    commit(conn, engine)
    assert table_rows(conn, "store__t__p0") == {}


def test_a_foreign_table_of_the_same_name_is_refused(conn: duckdb.DuckDBPyConnection) -> None:
    conn.execute('CREATE TABLE "store__x__p0" (id INTEGER, name VARCHAR)')
    with pytest.raises(StoreError, match=r"store 'x'.*not a samza_nb store table") as info:
        DuckDBEngine(conn, "store__x__p0", store_name="x")
    assert "samza.duckdb" in str(info.value), "the error names the database file"


@pytest.mark.parametrize(
    ("call", "needle"),
    [
        (lambda e: e.put("a", b"1"), "key 'a' of type str"),
        (lambda e: e.put(b"a", "1"), "value '1' of type str for key b'a'"),
        (lambda e: e.put(b"a", None), "None as the value of key b'a'"),
        (lambda e: e.get(None), "None as key"),
        (lambda e: e.delete(1), "key 1 of type int"),
        (lambda e: e.range(b"a", None), "None as bound"),
        (lambda e: e.put_all([(b"a", b"1"), (b"b", 2)]), "value 2"),
        (lambda e: e.delete_all([b"a", None]), "None as key"),
    ],
)
def test_bad_keys_and_values_name_store_and_key(
    conn: duckdb.DuckDBPyConnection, call: Any, needle: str
) -> None:
    engine = engine_of(conn)
    with pytest.raises(StoreError, match="store 't'") as info:
        call(engine)
    assert needle in str(info.value)
    assert engine.pending == {}


def test_use_after_close_is_an_error(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    engine.close()
    engine.close()  # idempotent
    with pytest.raises(StoreError, match="after close"):
        engine.put(b"a", b"1")


def test_writers_on_other_threads_during_commits_lose_nothing(conn: duckdb.DuckDBPyConnection) -> None:
    engine = engine_of(conn)
    count = 20_000

    def writer() -> None:
        for i in range(count):
            engine.put(b"k%d" % i, b"v")

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    commits = 0
    while thread.is_alive() and commits < 200:
        commit(conn, engine)
        commits += 1
    thread.join(30)
    commit(conn, engine)
    assert len(table_rows(conn, "store__t__p0")) == count


def test_row_count_is_the_committed_rows_mirrored_or_not(conn: duckdb.DuckDBPyConnection) -> None:
    for preload in (1_000_000, 0):
        engine = engine_of(conn, table=f"store__t__p{preload}", preload_max_rows=preload)
        assert engine.mirrored is (preload > 0)
        engine.put_all([(b"a", b"1"), (b"b", b"1"), (b"c", b"1")])
        assert engine.row_count() == 0, "pending writes are not rows yet"
        commit(conn, engine)
        engine.delete(b"a")
        commit(conn, engine)
        assert engine.row_count() == 2
        engine.truncate()
        assert engine.row_count() == 2, "the table is emptied by the next commit, not before"
        commit(conn, engine)
        assert engine.row_count() == 0
        engine.close()
