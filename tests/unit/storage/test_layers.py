"""SerializedStore and LoggedStore on their own: encoding, errors naming store and key, changelog order."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb.errors import SamzaError
from samza_nb.serde import IntSerde, JsonSerde, StringSerde
from samza_nb.storage import StoreError
from samza_nb.storage.layers.logged import LoggedStore
from samza_nb.storage.layers.serialized import SerializedStore

from .support import RecordingStore


def serialized(key_serde: Any = None, msg_serde: Any = None) -> tuple[SerializedStore, RecordingStore]:
    inner = RecordingStore()
    return SerializedStore(inner, key_serde or StringSerde(), msg_serde or JsonSerde(), "profiles"), inner


# -- SerializedStore -------------------------------------------------------------------------------------
def test_serialized_store_round_trips_through_bytes() -> None:
    store, inner = serialized()
    store.put("alice", {"age": 3, "tags": ["x"]})
    assert inner.data == {b"alice": b'{"age":3,"tags":["x"]}'}
    assert store.get("alice") == {"age": 3, "tags": ["x"]}
    assert store.get("bob") is None
    store.put_all([("bob", 1), ("carol", [2])])
    assert store.get_all(["bob", "carol", "dave"]) == {"bob": 1, "carol": [2]}
    assert list(store.range("b", "c")) == [("bob", 1)]
    store.delete_all(["bob"])
    assert [k for k, _ in store.all()] == ["alice", "carol"]


def test_int_keys_iterate_in_serialized_byte_order() -> None:
    store, _ = serialized(IntSerde(), IntSerde())
    numbers = [5, -1, 0, 2**31 - 1, -(2**31), 1, -7]
    for n in numbers:
        store.put(n, n * 2 if abs(n) < 2**30 else 0)
    assert [k for k, _ in store.all()] == [0, 1, 5, 2**31 - 1, -(2**31), -7, -1]
    assert [k for k, _ in store.range(1, -7)] == [1, 5, 2**31 - 1, -(2**31)]


def test_unencodable_value_names_store_and_key() -> None:
    store, inner = serialized(StringSerde(), IntSerde())
    with pytest.raises(StoreError, match=r"store 'profiles'.*'x'.*key 'page-1'") as info:
        store.put("page-1", "x")
    assert info.value.store == "profiles"
    assert info.value.key == "page-1"
    assert isinstance(info.value, SamzaError)
    assert inner.data == {}


def test_unencodable_key_names_store_and_key() -> None:
    store, _ = serialized(StringSerde(), IntSerde())
    with pytest.raises(StoreError, match=r"store 'profiles'.*key 42") as info:
        store.get(42)
    assert info.value.key == 42


def test_put_all_with_one_bad_entry_writes_nothing_and_names_it() -> None:
    store, inner = serialized(StringSerde(), IntSerde())
    with pytest.raises(StoreError, match="key 'b'") as info:
        store.put_all([("a", 1), ("b", 2**40), ("c", 3)])
    assert info.value.key == "b"
    assert inner.data == {}


def test_undecodable_stored_bytes_name_store_and_key() -> None:
    store, inner = serialized(StringSerde(), IntSerde())
    inner.data[b"k"] = b"\x01"
    with pytest.raises(StoreError, match=r"store 'profiles'.*decode.*key 'k'"):
        store.get("k")


def test_a_user_serde_returning_non_bytes_is_caught() -> None:
    class Sloppy:
        def to_bytes(self, obj: Any) -> Any:
            return str(obj)

        def from_bytes(self, data: bytes) -> Any:
            return data

    store, inner = serialized(StringSerde(), Sloppy())
    with pytest.raises(StoreError, match="returned str"):
        store.put("a", 1)
    with pytest.raises(StoreError, match="returned str"):
        store.put_all([("a", 1)])
    assert inner.data == {}


# -- LoggedStore -----------------------------------------------------------------------------------------
def logged() -> tuple[LoggedStore, RecordingStore, list[tuple[str, Any]]]:
    events: list[tuple[str, Any]] = []
    inner = RecordingStore()

    class Watching(RecordingStore):
        def put(self, key: Any, value: Any) -> None:
            events.append(("apply", (key, value)))
            inner.put(key, value)

        def put_all(self, entries: Any) -> None:
            events.append(("apply_all", list(entries)))
            inner.put_all(entries)

        def delete(self, key: Any) -> None:
            events.append(("apply", (key, None)))
            inner.delete(key)

        def delete_all(self, keys: Any) -> None:
            events.append(("apply_all", [(k, None) for k in keys]))
            inner.delete_all(keys)

    store = LoggedStore(Watching(), lambda k, v: events.append(("send", (k, v))), "counts")
    return store, inner, events


def test_every_write_is_sent_before_it_is_applied() -> None:
    store, inner, events = logged()
    store.put(b"a", b"1")
    store.delete(b"a")
    store.put_all([(b"b", b"2"), (b"c", b"3")])
    store.delete_all([b"b", b"c"])
    assert events == [
        ("send", (b"a", b"1")),
        ("apply", (b"a", b"1")),
        ("send", (b"a", None)),
        ("apply", (b"a", None)),
        ("send", (b"b", b"2")),
        ("send", (b"c", b"3")),
        ("apply_all", [(b"b", b"2"), (b"c", b"3")]),
        ("send", (b"b", None)),
        ("send", (b"c", None)),
        ("apply_all", [(b"b", None), (b"c", None)]),
    ]
    assert inner.data == {}


def test_a_failing_send_applies_nothing_and_names_the_key() -> None:
    inner = RecordingStore()

    def send(key: bytes, value: bytes | None) -> None:
        if key == b"bad":
            raise ConnectionError("broker down")

    store = LoggedStore(inner, send, "counts")
    with pytest.raises(StoreError, match=r"store 'counts'.*b'bad'.*ConnectionError: broker down"):
        store.put_all([(b"ok", b"1"), (b"bad", b"2")])
    with pytest.raises(StoreError, match="b'bad'"):
        store.put(b"bad", b"1")
    assert inner.data == {}


def test_a_samza_error_from_send_propagates_unchanged() -> None:
    failure = SamzaError("producer closed")

    def send(key: bytes, value: bytes | None) -> None:
        raise failure

    store = LoggedStore(RecordingStore(), send, "counts")
    with pytest.raises(SamzaError) as info:
        store.delete(b"a")
    assert info.value is failure


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.put(None, b"1"),
        lambda s: s.put(b"a", None),
        lambda s: s.put("text", b"1"),
        lambda s: s.put_all([(b"a", b"1"), (b"b", None)]),
        lambda s: s.delete(None),
        lambda s: s.delete_all([b"a", None]),
    ],
)
def test_invalid_writes_are_refused_before_anything_is_sent(call: Any) -> None:
    store, _inner, events = logged()
    with pytest.raises(StoreError, match="store 'counts'"):
        call(store)
    assert events == []
