"""CachedStore: Samza's TestCachedStore scenarios (under the write-behind rule), plus the rules one by one."""

from __future__ import annotations

import pytest

from samza_nb.errors import ConfigError
from samza_nb.serde import IntSerde, JsonSerde, StringSerde
from samza_nb.storage import StoreError
from samza_nb.storage.layers.cached import CachedStore
from samza_nb.storage.layers.serialized import SerializedStore

from .support import RecordingStore


def cached(cache_size: int, batch: int) -> tuple[CachedStore, RecordingStore]:
    inner = RecordingStore()
    return CachedStore(inner, cache_size, batch, "s"), inner


# -- ported from Samza's TestCachedStore -----------------------------------------------------------------
def test_lru_cache_eviction() -> None:
    # Samza's scenario, under this cache's rule: dirty entries are not in the bounded LRU, so evicting never
    # writes; only a full batch of changes (or a flush) does.
    store, kv = cached(2, 2)
    assert kv.data == {}

    store.put("test1-key", "test1-value")  # below the batch size
    assert kv.data == {}, "entries should not have been written yet"

    store.put("test2-key", "test2-value")  # batch size reached
    assert kv.data == {"test1-key": "test1-value", "test2-key": "test2-value"}
    assert store.cached_count() == 2, "written entries become clean cache entries"

    store.put("test3-key", "test3-value")  # one change waiting; the clean cache is untouched
    assert len(kv.data) == 2
    assert store.get("test1-key") == "test1-value"

    store.put("test4-key", "test4-value")  # batch full again: test3 and test4 written together
    assert set(kv.data) == {"test1-key", "test2-key", "test3-key", "test4-key"}
    assert kv.count("put_all") == 2
    assert store.cached_count() == 2, "the clean cache stays within its size"
    assert kv.count("get") == 0


def test_evicting_never_writes_and_changes_outlive_the_cache_size() -> None:
    store, kv = cached(2, 100)
    for i in range(50):
        store.put(f"k{i}", i)
    assert kv.count("put_all") == 0, "50 changes wait as objects although the cache holds 2"
    assert [store.get(f"k{i}") for i in range(50)] == list(range(50))
    assert kv.count("get") == 0, "every change is served from the dirty map"
    store.flush()
    assert kv.args("put_all") == [[(f"k{i}", i) for i in range(50)]], "one write, oldest first"
    assert store.cached_count() == 2, "the most recent written entries stay cached"
    assert store.get("k49") == 49 and kv.count("get") == 0
    assert store.get("k0") == 0 and kv.args("get") == ["k0"]


def test_a_read_after_a_write_below_sees_the_new_value_not_a_stale_clean_one() -> None:
    store, kv = cached(10, 100)
    kv.data["a"] = 1
    assert store.get("a") == 1  # cached clean
    store.put("a", 2)
    assert store.get("a") == 2
    store.flush()
    kv.calls.clear()
    assert store.get("a") == 2
    assert kv.calls == []


def test_iterator() -> None:
    store, _ = cached(100, 100)
    keys = ["test1-key", "test2-key", "test3-key"]
    values = ["test1-value", "test2-value", "test3-value"]
    for key, value in zip(keys, values, strict=True):
        store.put(key, value)

    assert list(store.all()) == list(zip(keys, values, strict=True))
    assert list(store.range(keys[0], keys[2])) == list(zip(keys[:2], values[:2], strict=True))


def test_put_all_dirty_entries() -> None:
    store, kv = cached(4, 4)
    keys = ["test1-key", "test2-key", "test3-key", "test4-key"]
    values = ["test1-value", "test2-value", "test3-value", "test4-value"]
    for i in range(3):
        store.put(keys[i], values[i])
    assert kv.count("put_all") == 0
    assert kv.count("flush") == 0

    store.put(keys[3], values[3])
    assert kv.args("put_all") == [list(zip(keys, values, strict=True))], "one batch, oldest first"
    assert kv.count("flush") == 0


def test_unhashable_key_is_an_error_naming_store_and_key() -> None:
    # Samza's testArrayCheck: array keys misbehave in a hash map. Python refuses them outright.
    store, _ = cached(10, 10)
    with pytest.raises(StoreError, match=r"store 's'.*\['a'\].*object\.cache\.size=0") as info:
        store.put(["a"], 1)
    assert info.value.store == "s"
    assert info.value.key == ["a"]
    with pytest.raises(StoreError, match=r"store 's'.*\{'a': 1\}"):
        store.delete({"a": 1})
    # ``get`` is the dirty map's C-level lookup: Python's own error, as for a dict.
    with pytest.raises(TypeError, match="unhashable type: 'dict'"):
        store.get({"a": 1})


# -- the rules, one by one ----------------------------------------------------------------------------------
def test_repeated_puts_write_only_the_latest_value() -> None:
    store, kv = cached(10, 3)
    store.put("a", 1)
    store.put("a", 2)
    store.put("a", 3)
    store.put("b", 1)
    assert kv.count("put_all") == 0, "a key written three times is one dirty entry"
    store.put("c", 1)
    assert kv.args("put_all") == [[("a", 3), ("b", 1), ("c", 1)]]


def test_hits_never_reach_the_store_below_and_misses_cache_absence() -> None:
    store, kv = cached(10, 10)
    store.put("a", 1)
    assert store.get("a") == 1
    assert store.get("missing") is None
    assert store.get("missing") is None
    assert kv.args("get") == ["missing"], "one read below for the miss; the absence is cached"


def test_a_task_never_holds_an_object_the_cache_keeps() -> None:
    store, kv = cached(10, 10)
    value = {"n": 1}
    store.put("a", value)
    value["n"] = 2  # after the put
    got = store.get("a")
    assert got == {"n": 1} and got is not value
    got["n"] = 3  # without a put
    assert store.get("a") == {"n": 1}
    assert store.get_all(["a"]) == {"a": {"n": 1}}
    kv.data["b"] = [1]
    store.get("b").append(2)  # read below, cached clean
    store.get_all(["b"])["b"].append(2)
    assert store.get("b") == [1] and kv.data["b"] == [1]
    store.flush()
    assert kv.args("put_all") == [[("a", {"n": 1})]]
    store.get("a")["n"] = 4  # cached clean after the write below
    assert store.get("a") == {"n": 1} and kv.data["a"] == {"n": 1}


def test_changes_count_toward_the_batch_whatever_their_values() -> None:
    store, kv = cached(10, 3)
    store.put("a", 1)
    store.put("b", {"n": 1})
    store.put("a", [1])  # the same key, now a value that can change: still one change
    assert store.dirty_count() == 2 and kv.count("put_all") == 0
    store.delete("b")
    store.put("c", "x")
    assert kv.args("put_all") == [[("c", "x"), ("a", [1])]]
    assert kv.args("delete_all") == [["b"]]
    assert store.dirty_count() == 0


def test_a_failed_write_keeps_the_changes_of_every_kind_except_the_culprit() -> None:
    kv = RecordingStore()
    store = CachedStore(SerializedStore(kv, StringSerde(), JsonSerde(), "s"), 10, 3, "s")
    store.put("a", 1)
    store.put("b", {"n": 1})
    with pytest.raises(StoreError, match=r"store 's'.*key 'c'"):
        store.put("c", {"n": {1, 2}})  # a set: JSON cannot hold it
    assert kv.data == {}
    assert (store.get("a"), store.get("b"), store.get("c")) == (1, {"n": 1}, None)
    assert store.dirty_count() == 2
    store.flush()
    assert kv.data == {b"a": b"1", b"b": b'{"n":1}'}


def test_deletes_are_batched_and_hide_the_key() -> None:
    store, kv = cached(10, 10)
    kv.data.update({"a": 1, "b": 2, "c": 3})
    store.delete("a")
    store.delete_all(["b"])
    assert store.get("a") is None
    assert store.get("b") is None
    assert kv.count("get") == 0, "a deleted key is known absent in the cache"
    store.put("d", 4)
    store.flush()
    assert kv.args("put_all") == [[("d", 4)]]
    assert kv.args("delete_all") == [["a", "b"]]
    assert kv.data == {"c": 3, "d": 4}


def test_put_after_delete_writes_the_put_only() -> None:
    store, kv = cached(10, 10)
    store.delete("a")
    store.put("a", 5)
    store.flush()
    assert kv.args("put_all") == [[("a", 5)]]
    assert kv.count("delete_all") == 0


@pytest.mark.parametrize("operation", ["range", "all", "snapshot", "flush", "close"])
def test_dirty_entries_are_written_before(operation: str) -> None:
    store, kv = cached(10, 10)
    store.put("a", 1)
    store.delete("b")
    kv.data["b"] = 0
    if operation == "range":
        result = list(store.range("a", "z"))
    elif operation == "all":
        result = list(store.all())
    elif operation == "snapshot":
        result = store.snapshot()
    else:
        getattr(store, operation)()
        result = sorted(kv.data.items())
    assert result == [("a", 1)]
    assert kv.count("put_all") == 1
    assert kv.count("delete_all") == 1
    if operation in ("flush", "close"):
        assert kv.count("flush") == 1
    if operation == "close":
        assert kv.count("close") == 1


def test_evicting_clean_entries_writes_nothing() -> None:
    store, kv = cached(2, 2)
    kv.data.update({"a": 1, "b": 2, "c": 3})
    for key in ("a", "b", "c", "a", "b", "c"):
        store.get(key)
    assert store.cached_count() == 2
    assert kv.count("put_all") == 0


def test_get_refreshes_recency() -> None:
    store, kv = cached(2, 2)
    kv.data.update({"a": 1, "b": 2, "c": 3})
    store.get("a")
    store.get("b")
    store.get("a")  # b is now the least recently used
    store.get("c")  # evicts b
    kv.calls.clear()
    store.get("a")
    store.get("b")
    assert kv.args("get") == ["b"]


def test_get_all_serves_hits_and_reads_misses_in_one_call() -> None:
    store, kv = cached(10, 10)
    kv.data.update({"x": 10, "y": 20})
    store.put("a", 1)
    store.delete("z")
    assert store.get_all(["a", "x", "y", "z", "w"]) == {"a": 1, "x": 10, "y": 20}
    assert kv.args("get_all") == [["x", "y", "w"]]
    assert kv.count("get") == 0
    kv.calls.clear()
    assert store.get_all(["x", "w"]) == {"x": 10}
    assert kv.calls == [], "the misses, absences included, are now cached"


def test_a_batch_that_cannot_be_encoded_drops_only_the_culprit() -> None:
    kv = RecordingStore()
    store = CachedStore(SerializedStore(kv, StringSerde(), IntSerde(), "counts"), 10, 3, "counts")
    store.put("a", 1)
    store.put("b", "not an int")
    with pytest.raises(StoreError, match=r"store 'counts'.*key 'b'") as info:
        store.put("c", 3)
    assert info.value.key == "b"
    assert kv.data == {}, "nothing of the failed batch was written"
    assert store.get("b") is None, "the unencodable value was dropped"
    assert store.dirty_count() == 2
    store.flush()
    assert kv.data == {b"a": b"\x00\x00\x00\x01", b"c": b"\x00\x00\x00\x03"}


def test_eviction_failure_keeps_the_dirty_entry_readable() -> None:
    kv = RecordingStore()
    store = CachedStore(SerializedStore(kv, StringSerde(), IntSerde(), "s"), 2, 2, "s")
    store.put("bad", "x")  # dirty and eldest
    with pytest.raises(StoreError):
        store.put("b", 1)  # batch full: the write fails on "bad"
    assert store.get("b") == 1


@pytest.mark.parametrize(
    ("cache_size", "batch", "key"),
    [
        (0, 5, "stores.s.object.cache.size"),
        (10, 0, "stores.s.write.batch.size"),
    ],
)
def test_bad_sizes_are_config_errors_naming_the_key(cache_size: int, batch: int, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        CachedStore(RecordingStore(), cache_size, batch, "s")
    assert info.value.key == key


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.get(None),
        lambda s: s.put(None, 1),
        lambda s: s.put("a", None),
        lambda s: s.put_all([("a", 1), ("b", None)]),
        lambda s: s.delete(None),
        lambda s: s.delete_all(["a", None]),
        lambda s: s.get_all(["a", None]),
        lambda s: s.get_all(None),
        lambda s: s.range(None, "a"),
        lambda s: s.range("a", None),
    ],
)
def test_none_is_refused_and_nothing_changes(call: object) -> None:
    store, kv = cached(10, 10)
    with pytest.raises(StoreError, match="store 's'.*None"):
        call(store)  # type: ignore[operator]
    store.flush()
    assert kv.data == {}


# -- a store that starts empty: misses answered without reading below ------------------------------------
def empty_below(cache_size: int, batch: int) -> tuple[CachedStore, RecordingStore, list[int]]:
    inner = RecordingStore()
    asked: list[int] = []

    def below_is_empty() -> bool:
        asked.append(len(inner.data))
        return not inner.data

    return CachedStore(inner, cache_size, batch, "s", below_is_empty=below_is_empty), inner, asked


def test_a_new_store_whose_keys_fit_never_reads_below() -> None:
    store, kv, asked = empty_below(10, 100)
    assert asked == [], "not asked before the first miss (a restore may still write below)"
    for i in range(5):
        store.put(f"k{i}", (store.get(f"k{i}") or 0) + 1)
    store.flush()
    assert store.get("k0") == 1 and store.get("absent") is None
    assert store.get_all(["k1", "absent", "k2"]) == {"k1": 1, "k2": 1}
    assert kv.count("get") == 0 and kv.count("get_all") == 0
    assert asked == [0], "asked once, at the first miss"


def test_the_first_miss_sees_what_a_restore_wrote_below_after_construction() -> None:
    store, kv, asked = empty_below(10, 100)
    kv.data["restored"] = 7  # written below after the cache was built, before the task's first read
    assert store.get("restored") == 7
    assert store.get("absent") is None and kv.args("get") == ["restored", "absent"]
    assert asked == [1]


def test_after_an_eviction_misses_read_below_again() -> None:
    store, kv, _ = empty_below(2, 100)
    assert store.get("first") is None  # the store starts complete
    for i in range(4):
        store.put(f"k{i}", i)
    store.flush()  # four written entries in a cache of two: k0 and k1 are evicted, below holds them
    assert kv.count("get") == 0
    assert store.get("k0") == 0 and store.get("k1") == 1, "evicted keys are read below, not 'absent'"
    assert kv.args("get") == ["k0", "k1"]
    assert store.get_all(["k2", "k3", "k0"]) == {"k0": 0, "k2": 2, "k3": 3}


def test_a_failed_write_below_ends_completeness() -> None:
    store = CachedStore(
        SerializedStore(RecordingStore(), StringSerde(), IntSerde(), "s"),
        10,
        100,
        "s",
        below_is_empty=lambda: True,
    )
    assert store.get("a") is None
    store.put("a", 1)
    store.flush()
    store.put("a", "not an int")  # the culprit: its change is dropped, its value below stays 1
    with pytest.raises(StoreError):
        store.flush()
    assert store.get("a") == 1, "the value below is read, not taken for absent"
