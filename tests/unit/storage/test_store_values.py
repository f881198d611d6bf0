"""A task never holds an object a store keeps (issue 39, item 4): values read are the task's own copies,
values put are the store's own, on real DuckDB stores built by the factory (json values, every cache)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from samza_nb.config import Config
from samza_nb.storage import DuckDBStoreFactory, StoreError
from samza_nb.storage.values import copy_value

from .conftest import commit

FACTORY = "samza_nb.storage.duckdb.DuckDBStoreFactory"


def open_store(conn: duckdb.DuckDBPyConnection, partition: int = 0, **extra: str) -> Any:
    values = {
        "job.name": "job",
        "stores.totals.factory": FACTORY,
        "stores.totals.key.serde": "string",
        "stores.totals.msg.serde": "json",
        **{k.replace("__", "."): v for k, v in extra.items()},
    }
    return DuckDBStoreFactory().get_store("totals", partition, Config(values), conn)


# The default cache; a cache of one entry (values fall out of it and are read below); no cache at all;
# a write batch of one (every put is written below at once); the thread-safe stack.
CACHES = {
    "default": {},
    "cache-1": {"stores__totals__object__cache__size": "1"},
    "no-cache": {"stores__totals__object__cache__size": "0"},
    "batch-1": {"stores__totals__write__batch__size": "1"},
    "thread-safe": {"stores__totals__thread__safe": "true"},
}


@pytest.fixture(params=list(CACHES), ids=list(CACHES))
def store(request: pytest.FixtureRequest, conn: duckdb.DuckDBPyConnection) -> Any:
    opened, engine = open_store(conn, **CACHES[request.param])
    yield opened
    engine.close()


def test_a_value_changed_without_a_put_is_unchanged_in_the_store(store: Any) -> None:
    store.put("a", {"n": 1, "tags": ["x"]})
    for _ in range(3):  # a change waiting, then written below and cached clean, then read below again
        value = store.get("a")
        value["n"] += 100
        value["tags"].append("y")
        assert store.get("a") == {"n": 1, "tags": ["x"]}
        store.flush()
        store.put("b", {"filler": True})  # with a cache of one entry, "a" falls out of it
    assert store.get("a") is not store.get("a")


def test_a_value_changed_after_its_put_is_stored_as_it_was_put(store: Any) -> None:
    value = {"n": 1, "tags": ["x"]}
    store.put("a", value)
    value["n"] = 2
    value["tags"].append("y")
    assert store.get("a") == {"n": 1, "tags": ["x"]}
    entries = [("b", [1]), ("c", {"m": {"deep": 1}})]
    store.put_all(entries)
    entries[0][1].append(2)
    entries[1][1]["m"]["deep"] = 2
    store.flush()
    assert store.get_all(["a", "b", "c"]) == {"a": {"n": 1, "tags": ["x"]}, "b": [1], "c": {"m": {"deep": 1}}}


def test_get_all_range_all_and_snapshot_hand_out_copies(store: Any) -> None:
    store.put("a", {"n": 1})
    store.put("b", [1])
    for found in (store.get_all(["a", "b"]), store.get_all(["a", "b"])):  # dirty, then clean
        found["a"]["n"] = 99
        found["b"].append(99)
        store.flush()
    for entries in (list(store.range("a", "c")), list(store.all()), store.snapshot()):
        entries[0][1]["n"] = 99
        entries[1][1].append(99)
    assert store.get_all(["a", "b"]) == {"a": {"n": 1}, "b": [1]}


def test_a_key_can_change_between_plain_and_changeable_values(store: Any) -> None:
    store.put("a", {"n": 1})
    store.put("a", 5)
    assert store.get("a") == 5
    store.put("a", [1])
    store.delete("a")
    assert store.get("a") is None
    store.put("a", "text")
    store.put("a", {"n": 2})
    store.flush()
    assert store.get("a") == {"n": 2}
    assert list(store.all()) == [("a", {"n": 2})]


def test_a_value_that_cannot_be_copied_is_refused_naming_store_and_key(
    conn: duckdb.DuckDBPyConnection,
) -> None:
    store, engine = open_store(conn, stores__totals__msg__serde="pickle")
    with pytest.raises(StoreError, match=r"store 'totals': cannot copy the value .* of key 'lock'") as info:
        store.put("lock", {"held": threading.Lock()})
    assert info.value.key == "lock"
    assert store.get("lock") is None
    engine.close()


def test_plain_values_are_not_copied(conn: duckdb.DuckDBPyConnection) -> None:
    store, engine = open_store(conn)
    text, pair = "x" * 100, ("a", 1, 2.5)
    store.put("s", text)
    store.put("t", pair)
    assert store.get("s") is text and store.get("t") is pair
    engine.close()


def test_the_value_after_reopening_is_the_value_in_the_run(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    seen = []
    for _ in range(2):
        conn = duckdb.connect(str(db_path))
        store, engine = open_store(conn)
        if store.get("a") is None:
            store.put("a", {"n": 1})
            store.flush()
            commit(conn, engine)
        store.get("a")["n"] += 100  # no put
        seen.append(store.get("a"))
        engine.close()
        conn.close()
    assert seen == [{"n": 1}, {"n": 1}]


@pytest.mark.parametrize(
    "value",
    [
        {"a": [1, {"b": {2, 3}}], "c": bytearray(b"x"), (1, 2): (3, [4])},
        [[1], [2, [3]]],
        frozenset({1, (2, 3)}),
        {"cycle": None},
    ],
    ids=["nested", "lists", "frozenset", "cycle"],
)
def test_copy_value_shares_nothing_changeable(value: Any) -> None:
    if "cycle" in value:
        value["cycle"] = [value]
    copied = copy_value(value)
    assert type(copied) is type(value)

    def changeable_ids(obj: Any, seen: set[int]) -> set[int]:
        if id(obj) in seen:
            return set()
        seen.add(id(obj))
        found = {id(obj)} if isinstance(obj, dict | list | set | bytearray) else set()
        items = [*obj.keys(), *obj.values()] if isinstance(obj, dict) else obj
        if isinstance(obj, dict | list | set | tuple | frozenset):
            for item in items:
                found |= changeable_ids(item, seen)
        return found

    assert not changeable_ids(value, set()) & changeable_ids(copied, set())
    if "cycle" not in value:
        assert copied == value
