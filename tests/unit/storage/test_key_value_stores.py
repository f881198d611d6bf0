"""Samza's TestKeyValueStores, run against every layer combination over a real DuckDB engine.

Each variant is a stack of layers (as in Samza: cache, serde, cache-and-serde, none; plus the changelog
layer, the full factory-built stack, a synchronized stack, and the engine without its in-memory mirror),
and each runs in two commit modes: "buffered" (writes stay pending) and "committed" (every write is
flushed and committed to DuckDB at once, so reads come from the committed state).
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pytest

from samza_nb.config import Config
from samza_nb.serde import BytesSerde
from samza_nb.storage import DuckDBStoreFactory, StoreError
from samza_nb.storage.duckdb.engine import DuckDBEngine
from samza_nb.storage.duckdb.job_files import ensure_schema
from samza_nb.storage.layers.cached import CachedStore
from samza_nb.storage.layers.logged import LoggedStore
from samza_nb.storage.layers.serialized import SerializedStore
from samza_nb.storage.layers.synchronized import SynchronizedStore

from .conftest import commit

CACHE_SIZE = 1024
BATCH_SIZE = 1024
LETTERS = list("abcdefghijklmnopqrstuvwxyz")


def b(text: str) -> bytes:
    return text.encode()


def s(data: bytes) -> str:
    return data.decode()


class CommittingStore:
    """After every write: flush the store and commit its engine (reads then hit the committed state)."""

    def __init__(self, inner: Any, conn: duckdb.DuckDBPyConnection, engine: DuckDBEngine) -> None:
        self._inner, self._conn, self._engine = inner, conn, engine
        self._lock = threading.Lock()  # commits are serialized, as in the container

    def _commit(self) -> None:
        with self._lock:
            self._inner.flush()
            commit(self._conn, self._engine)

    def put(self, key: Any, value: Any) -> None:
        self._inner.put(key, value)
        self._commit()

    def put_all(self, entries: Iterable[tuple[Any, Any]]) -> None:
        self._inner.put_all(entries)
        self._commit()

    def delete(self, key: Any) -> None:
        self._inner.delete(key)
        self._commit()

    def delete_all(self, keys: Iterable[Any]) -> None:
        self._inner.delete_all(keys)
        self._commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@dataclass
class Variant:
    name: str
    store: Any
    engine: DuckDBEngine
    cache: bool
    thread_safe: bool
    committing: bool
    changelog: list[tuple[bytes, bytes | None]] = field(default_factory=list)


Builder = Callable[
    [duckdb.DuckDBPyConnection, int, list[tuple[bytes, bytes | None]]], tuple[Any, DuckDBEngine]
]
_partitions = itertools.count()


def _engine(conn: duckdb.DuckDBPyConnection, partition: int, preload: int = 1_000_000) -> DuckDBEngine:
    return DuckDBEngine(conn, f"store__kv__p{partition}", preload_max_rows=preload, store_name="kv")


def _serde(inner: Any) -> SerializedStore:
    return SerializedStore(inner, BytesSerde(), BytesSerde(), "kv")


def _cache(inner: Any) -> CachedStore:
    return CachedStore(inner, CACHE_SIZE, BATCH_SIZE, "kv")


def _logged(inner: Any, log: list[tuple[bytes, bytes | None]]) -> LoggedStore:
    return LoggedStore(inner, lambda k, v: log.append((k, v)), "kv")


def _factory(
    conn: duckdb.DuckDBPyConnection, partition: int, log: list[tuple[bytes, bytes | None]]
) -> tuple[Any, DuckDBEngine]:
    config = Config(
        {
            "job.name": "job",
            "stores.kv.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.kv.key.serde": "bytes",
            "stores.kv.msg.serde": "bytes",
            "stores.kv.changelog": "kafka.kv-changelog",
            "stores.kv.object.cache.size": str(CACHE_SIZE),
            "stores.kv.write.batch.size": str(BATCH_SIZE),
        }
    )
    return DuckDBStoreFactory().get_store("kv", partition, config, conn, lambda k, v: log.append((k, v)))


def _with(layers: Callable[[DuckDBEngine, list[Any]], Any], preload: int = 1_000_000) -> Builder:
    def build(conn: duckdb.DuckDBPyConnection, partition: int, log: list[Any]) -> tuple[Any, DuckDBEngine]:
        engine = _engine(conn, partition, preload)
        return layers(engine, log), engine

    return build


VARIANTS: dict[str, tuple[Builder, bool, bool]] = {
    # name: (builder, has cache, thread-safe)
    "none": (_with(lambda e, log: e), False, True),
    "none-unmirrored": (_with(lambda e, log: e, preload=0), False, True),
    "serde": (_with(lambda e, log: _serde(e)), False, False),
    "cache": (_with(lambda e, log: _cache(e)), True, False),
    "cache-and-serde": (_with(lambda e, log: _cache(_serde(e))), True, False),
    "logged": (_with(lambda e, log: _logged(e, log)), False, False),
    "full": (_with(lambda e, log: _cache(_serde(_logged(e, log)))), True, False),
    "full-unmirrored": (_with(lambda e, log: _cache(_serde(_logged(e, log))), preload=0), True, False),
    "synchronized-full": (
        _with(lambda e, log: SynchronizedStore(_cache(_serde(_logged(e, log))))),
        True,
        True,
    ),
    "factory": (_factory, True, False),
}


@pytest.fixture(scope="module")
def shared_conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    """One job database for the module; every test gets tables of its own (a fresh partition number)."""
    path = tmp_path_factory.mktemp("kv") / "samza.duckdb"
    connection = duckdb.connect(str(path))
    ensure_schema(connection, str(path), "job", "1")
    yield connection
    connection.close()


@pytest.fixture
def conn(shared_conn: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    return shared_conn


# Committing after every write matters where reads reach the engine's committed state.
_COMMITTED = ("none", "none-unmirrored", "full", "full-unmirrored", "factory")
_CASES = [(name, "buffered") for name in VARIANTS] + [(name, "committed") for name in _COMMITTED]


# Only these stacks may be shared between threads (the others are used from one thread at a time).
_THREAD_SAFE_CASES = [(name, mode) for name, mode in _CASES if VARIANTS[name][2]]


@pytest.fixture(params=_CASES, ids=[f"{name}-{mode}" for name, mode in _CASES])
def variant(request: pytest.FixtureRequest, conn: duckdb.DuckDBPyConnection) -> Iterator[Variant]:
    yield from _variant(request.param, conn)


@pytest.fixture(params=_THREAD_SAFE_CASES, ids=[f"{name}-{mode}" for name, mode in _THREAD_SAFE_CASES])
def shared_variant(request: pytest.FixtureRequest, conn: duckdb.DuckDBPyConnection) -> Iterator[Variant]:
    """A store stack that is safe to use from several threads at once."""
    yield from _variant(request.param, conn)


def _variant(case: tuple[str, str], conn: duckdb.DuckDBPyConnection) -> Iterator[Variant]:
    name, commit_mode = case
    builder, cache, thread_safe = VARIANTS[name]
    log: list[tuple[bytes, bytes | None]] = []
    store, engine = builder(conn, next(_partitions), log)
    if commit_mode == "committed":
        store = CommittingStore(store, conn, engine)
    yield Variant(name, store, engine, cache, thread_safe, commit_mode == "committed", log)
    store.close()


def check_range(expected: list[str], entries: Iterator[tuple[bytes, bytes]]) -> None:
    for letter in expected:
        key, value = next(entries)
        assert s(key) == letter
        assert s(value) == letter
    with pytest.raises(StopIteration):
        next(entries)


# -- ported from TestKeyValueStores ---------------------------------------------------------------------
def test_get_non_existent_is_null(variant: Variant) -> None:
    assert variant.store.get(b("hello")) is None


def test_get_all_when_zero_match(variant: Variant) -> None:
    variant.store.put(b("hello"), b("world"))
    actual = variant.store.get_all([b("foo"), b("bar")])
    assert actual.get(b("foo")) is None
    assert actual.get(b("bar")) is None


def test_get_all_when_full_match(variant: Variant) -> None:
    expected = {b("k0"): b("v0"), b("k1"): b("v1")}
    for key, value in expected.items():
        variant.store.put(key, value)
    assert variant.store.get_all(list(expected)) == expected


def test_get_all_when_partial_match(variant: Variant) -> None:
    variant.store.put(b("k0"), b("v0"))
    actual = variant.store.get_all([b("k1"), b("k0")])
    assert actual.get(b("k1")) is None
    assert actual[b("k0")] == b("v0")


def test_put_and_get(variant: Variant) -> None:
    variant.store.put(b("k"), b("v"))
    assert variant.store.get(b("k")) == b("v")


def test_double_put_and_get(variant: Variant) -> None:
    variant.store.put(b("k2"), b("v1"))
    variant.store.put(b("k2"), b("v3"))
    assert variant.store.get(b("k2")) == b("v3")


@pytest.mark.parametrize(
    "call",
    [
        lambda st, a: st.get(None),
        lambda st, a: st.get_all(None),
        lambda st, a: st.get_all([a, None]),
        lambda st, a: st.delete(None),
        lambda st, a: st.delete_all(None),
        lambda st, a: st.delete_all([a, None]),
        lambda st, a: st.put(None, a),
        lambda st, a: st.put(a, None),
        lambda st, a: st.put_all([(a, a), (a, None)]),
        lambda st, a: st.put_all([(None, a)]),
        lambda st, a: st.range(a, None),
        lambda st, a: st.range(None, a),
    ],
)
def test_nulls(variant: Variant, call: Callable[[Any, bytes], Any]) -> None:
    with pytest.raises(StoreError, match="store 'kv'.*None"):
        call(variant.store, b("a"))
    assert list(variant.store.all()) == []


def test_put_all(variant: Variant) -> None:
    entries = [(b(f"k{i}"), b(f"v{i}")) for i in range(CACHE_SIZE - 1)]
    variant.store.put_all(entries)
    if variant.cache:
        assert all(variant.store.get(k) is v for k, v in entries), "values are served from the cache"
    else:
        assert all(variant.store.get(k) == v for k, v in entries)


def test_iterate_all(variant: Variant) -> None:
    for letter in LETTERS:
        variant.store.put(b(letter), b(letter))
    check_range(LETTERS, variant.store.all())


def test_range(variant: Variant) -> None:
    for letter in LETTERS:
        variant.store.put(b(letter), b(letter))
    check_range(LETTERS[5:20], variant.store.range(b(LETTERS[5]), b(LETTERS[20])))


def test_delete(variant: Variant) -> None:
    a = b("a")
    assert variant.store.get(a) is None
    variant.store.put(a, a)
    assert variant.store.get(a) == a
    variant.store.delete(a)
    assert variant.store.get(a) is None


def test_delete_all_when_zero_match(variant: Variant) -> None:
    foo = b("foo")
    variant.store.put(foo, foo)
    variant.store.delete_all([b("bar")])
    assert variant.store.get(foo) == foo


def test_delete_all_when_full_match(variant: Variant) -> None:
    everything = {b("k0"): b("v0"), b("k1"): b("v1")}
    for key, value in everything.items():
        variant.store.put(key, value)
    assert len(variant.store.get_all(list(everything))) == len(everything)
    variant.store.delete_all(list(everything))
    for key in everything:
        assert variant.store.get(key) is None


def test_delete_all_when_partial_match(variant: Variant) -> None:
    variant.store.put(b("k0"), b("v0"))
    variant.store.put(b("k1"), b("v1"))
    assert variant.store.get(b("k0")) == b("v0")
    variant.store.delete_all([b("not found"), b("k0")])
    variant.store.flush()
    assert list(variant.store.all()) == [(b("k1"), b("v1"))]
    assert variant.store.get(b("k1")) == b("v1")


def test_simple_scenario(variant: Variant) -> None:
    values = [b(letter) for letter in LETTERS]
    for value in values:
        assert variant.store.get(value) is None
        variant.store.put(value, value)
        assert variant.store.get(value) == value
    for value in values:
        assert variant.store.get(value) == value
    for value in values:
        variant.store.delete(value)
    for value in values:
        assert variant.store.get(value) is None


def test_broken_scala_double_linked_list(variant: Variant) -> None:
    # Samza's SAMZA-80 regression: dirty-list bookkeeping across flushes and evictions.
    something = b("")
    keys = [b(letter) for letter in LETTERS]
    for key in keys[:CACHE_SIZE]:
        variant.store.put(key, something)
    variant.store.flush()
    variant.store.put(keys[1], something)
    variant.store.put(keys[0], something)
    variant.store.put(keys[1], something)
    variant.store.flush()
    variant.store.put(keys[0], something)
    for key in keys[2:CACHE_SIZE]:
        variant.store.get(key)
    variant.store.put(keys[10], something)
    variant.store.flush()
    assert [k for k, _ in variant.store.all()] == keys


def test_random_read_write_remove(variant: Variant) -> None:
    rand = random.Random(12345)
    keys = [b(letter) for letter in LETTERS]
    expected: dict[str, str] = {}
    for _ in range(3 if variant.committing else 100):  # fewer loops when every write commits
        for _ in range(30):
            index = rand.randrange(len(keys))
            value = LETTERS[rand.randrange(len(keys))]
            variant.store.get(keys[index])
            variant.store.put(keys[index], b(value))
            expected[LETTERS[index]] = value
        for letter, value in expected.items():
            stored = variant.store.get(b(letter))
            assert stored is not None
            assert s(stored) == value
        all_keys = [key for key, _ in variant.store.all()]
        for key in all_keys:
            variant.store.delete(key)
            del expected[s(key)]
        assert expected == {}


def test_parallel_read_write_diff_keys(shared_variant: Variant) -> None:
    store = shared_variant.store

    def writer(key: bytes, value: bytes) -> None:
        store.put(key, value)

    def reader_deleter(key: bytes, value: bytes) -> None:
        while store.get(key) != value:
            pass
        store.delete(key)

    threads = [
        threading.Thread(target=reader_deleter, args=(b("key1"), b("val1"))),
        threading.Thread(target=writer, args=(b("key1"), b("val1"))),
        threading.Thread(target=writer, args=(b("key2"), b("val2"))),
        threading.Thread(target=reader_deleter, args=(b("key2"), b("val2"))),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert store.get(b("key1")) is None
    assert store.get(b("key2")) is None
    store.flush()


def test_parallel_iterator_and_write(shared_variant: Variant) -> None:
    store = shared_variant.store
    store.put(b("key1"), b("val1"))
    store.put(b("key2"), b("val2"))
    failures: list[BaseException] = []
    first_started, changed = threading.Event(), threading.Event()

    def change() -> None:
        first_started.wait(10)
        store.put(b("key1"), b("val1-2"))
        store.delete(b("key2"))
        store.flush()
        changed.set()

    def iterate_after_change() -> None:
        changed.wait(10)
        try:
            assert dict(store.all()) == {b("key1"): b("val1-2")}
        except BaseException as exc:
            failures.append(exc)

    def iterate_before_change() -> None:
        entries = store.all()  # a snapshot: the change made meanwhile does not show
        first_started.set()
        changed.wait(10)
        try:
            assert dict(entries) == {b("key1"): b("val1"), b("key2"): b("val2")}
        except BaseException as exc:
            failures.append(exc)

    threads = [threading.Thread(target=f) for f in (iterate_after_change, iterate_before_change, change)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert failures == []
    store.flush()


# -- beyond Samza's suite ---------------------------------------------------------------------------------
def test_range_and_all_follow_byte_order(variant: Variant) -> None:
    keys = [b"\x80", b"\x7f", b"a", b"a\x00", b"", b"\xff\x00", b"\x00", b"ab", b"B"]
    for key in keys:
        variant.store.put(key, b"v" + key)
    expected = sorted(keys)
    assert [k for k, _ in variant.store.all()] == expected
    assert [k for k, _ in variant.store.range(b"a", b"\x80")] == [b"a", b"a\x00", b"ab", b"\x7f"]
    assert list(variant.store.range(b"b", b"b")) == []
    assert list(variant.store.range(b"z", b"a")) == []


def test_snapshot_is_a_stable_copy(variant: Variant) -> None:
    variant.store.put(b"a", b"1")
    snap = variant.store.snapshot()
    variant.store.put(b"b", b"2")
    variant.store.delete(b"a")
    assert snap == [(b"a", b"1")]
    assert variant.store.snapshot() == [(b"b", b"2")]


def test_model_based_random_operations(variant: Variant, conn: duckdb.DuckDBPyConnection) -> None:
    """Random writes, reads, ranges, commits and failed commits agree with a dict at every step."""
    rand = random.Random(7)
    model: dict[bytes, bytes] = {}
    keys = [bytes([rand.randrange(256) for _ in range(rand.randrange(1, 3))]) for _ in range(60)]
    store = variant.store
    for step in range(300 if variant.committing else 1500):
        op = rand.random()
        key = rand.choice(keys)
        if op < 0.35:
            value = bytes([rand.randrange(256)]) * rand.randrange(1, 4)
            store.put(key, value)
            model[key] = value
        elif op < 0.45:
            store.delete(key)
            model.pop(key, None)
        elif op < 0.5:
            batch = [(rand.choice(keys), bytes([step % 256])) for _ in range(5)]
            store.put_all(batch)
            model.update(batch)
        elif op < 0.75:
            assert store.get(key) == model.get(key)
        elif op < 0.8:
            wanted = rand.sample(keys, 5)
            assert store.get_all(wanted) == {k: model[k] for k in wanted if k in model}
        elif op < 0.85:
            low, high = sorted(rand.sample(keys, 2))
            assert list(store.range(low, high)) == sorted((k, v) for k, v in model.items() if low <= k < high)
        elif op < 0.9:
            store.flush()
            commit(conn, variant.engine)
        elif op < 0.95:
            store.flush()
            cur = conn.cursor()
            cur.begin()
            variant.engine.write_pending(cur)
            cur.rollback()
            cur.close()
            variant.engine.discard_pending_failed()
        else:
            assert list(store.all()) == sorted(model.items())
    store.flush()
    commit(conn, variant.engine)
    assert list(store.all()) == sorted(model.items())
    reopened = DuckDBEngine(conn, variant.engine.table, store_name="kv")
    assert reopened.snapshot() == sorted(model.items()), "the committed table holds exactly the model"
    reopened.close()
