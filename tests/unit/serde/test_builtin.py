"""The built-in serdes: byte layouts (Samza's), round trips and refusals."""

from __future__ import annotations

import math
import struct
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.errors import SamzaError
from samza_nb.serde import (
    BytesSerde,
    DoubleSerde,
    FastSerde,
    IntSerde,
    JsonSerde,
    LongSerde,
    PickleSerde,
    Serde,
    SerdeError,
    SerdeRegistry,
    StringSerde,
    serde_for,
)


@pytest.mark.parametrize(
    ("serde", "obj", "data"),
    [
        (StringSerde(), "héllo", "héllo".encode()),
        (StringSerde(), "", b""),
        (JsonSerde(), {"b": 1, "a": [1, "x", None, True]}, b'{"a":[1,"x",null,true],"b":1}'),
        (JsonSerde(), "é", '"é"'.encode()),
        (BytesSerde(), b"\x00\xff", b"\x00\xff"),
        (BytesSerde(), bytearray(b"\x01"), b"\x01"),  # a bytearray is taken as its bytes
        (BytesSerde(), memoryview(b"\x02"), b"\x02"),
        (IntSerde(), 1, b"\x00\x00\x00\x01"),
        (IntSerde(), -1, b"\xff\xff\xff\xff"),
        (IntSerde(), -(2**31), b"\x80\x00\x00\x00"),
        (LongSerde(), 258, b"\x00\x00\x00\x00\x00\x00\x01\x02"),
        (LongSerde(), -2, b"\xff" * 7 + b"\xfe"),
        (DoubleSerde(), 1.5, struct.pack(">d", 1.5)),
    ],
)
def test_layout_and_round_trip(serde: Serde, obj: Any, data: bytes) -> None:
    assert serde.to_bytes(obj) == data
    assert serde.from_bytes(data) == obj
    assert isinstance(serde, Serde)


def test_json_equal_objects_have_equal_bytes() -> None:
    serde = JsonSerde()
    assert serde.to_bytes({"x": 1, "y": 2}) == serde.to_bytes({"y": 2, "x": 1})


@pytest.mark.parametrize(
    ("serde", "obj"),
    [
        (StringSerde(), 42),
        (StringSerde(), b"bytes"),
        (StringSerde(), "\ud800"),  # a lone surrogate has no UTF-8 form
        (JsonSerde(), {1, 2}),
        (JsonSerde(), math.nan),
        (JsonSerde(), object()),
        (BytesSerde(), "text"),
        (BytesSerde(), 7),
        (IntSerde(), 2**31),
        (IntSerde(), -(2**31) - 1),
        (IntSerde(), "1"),
        (IntSerde(), 1.0),
        (LongSerde(), 2**63),
        (LongSerde(), None),
        (DoubleSerde(), "1.0"),
    ],
)
def test_unencodable_objects_raise_serde_error(serde: Serde, obj: Any) -> None:
    with pytest.raises(SerdeError) as info:
        serde.to_bytes(obj)
    assert isinstance(info.value, SamzaError)
    assert type(obj).__name__ in str(info.value)


@pytest.mark.parametrize(
    ("serde", "data"),
    [
        (StringSerde(), b"\xff\xfe"),
        (JsonSerde(), b"{not json"),
        (IntSerde(), b"\x00\x00\x01"),
        (LongSerde(), b"\x00" * 4),
        (DoubleSerde(), b""),
    ],
)
def test_undecodable_bytes_raise_serde_error(serde: Serde, data: bytes) -> None:
    with pytest.raises(SerdeError):
        serde.from_bytes(data)


def test_int_serde_byte_order_puts_negatives_after_positives() -> None:
    serde = IntSerde()
    numbers = [-(2**31), -3, -1, 0, 1, 2, 2**31 - 1]
    by_bytes = sorted(numbers, key=serde.to_bytes)
    assert by_bytes == [0, 1, 2, 2**31 - 1, -(2**31), -3, -1]


def test_int_serdes_accept_int_subclasses_and_index_types() -> None:
    class Index:
        def __index__(self) -> int:
            return 7

    assert IntSerde().to_bytes(Index()) == b"\x00\x00\x00\x07"
    assert IntSerde().to_bytes(True) == IntSerde().to_bytes(1), "True == 1, as it is as a dict key"
    assert DoubleSerde().to_bytes(2) == struct.pack(">d", 2.0)


@pytest.mark.parametrize("serde", [StringSerde(), IntSerde(), LongSerde(), DoubleSerde()])
@pytest.mark.parametrize("obj", ["é", "", 0, -5, 2**31, 2**63, 1.5, True, None, b"x", [1], "\ud800"])
def test_fast_encoders_agree_with_to_bytes(serde: Any, obj: Any) -> None:
    try:
        expected: bytes | None = serde.to_bytes(obj)
    except SerdeError:
        expected = None
    try:
        fast: bytes | None = serde.fast_to_bytes(obj)
    except Exception:
        fast = None
    assert fast == expected


def test_fast_encoders_are_declared_by_the_fast_serde_protocol() -> None:
    fast = [StringSerde(), IntSerde(), LongSerde(), DoubleSerde()]
    assert all(isinstance(serde, FastSerde) for serde in fast)
    assert not isinstance(JsonSerde(), FastSerde)
    assert not isinstance(BytesSerde(), FastSerde)


def test_default_bytes_serde_names_the_unset_key() -> None:
    serde = BytesSerde(unset_key="stores.counts.key.serde")
    assert serde.to_bytes(b"ok") == b"ok"
    with pytest.raises(SerdeError, match=r"stores\.counts\.key\.serde is not set"):
        serde.to_bytes("page-1")


# -- pickle ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "obj", [("user-7", 3), {"a": [1, 2.5, None]}, frozenset({1, 2}), b"\x00raw", 2**80, ("t", (1, ("x",)))]
)
def test_pickle_round_trips_any_picklable_value(obj: object) -> None:
    serde = PickleSerde()
    assert isinstance(serde, Serde)
    data = serde.to_bytes(obj)
    assert data[:2] == b"\x80\x05"  # protocol 5, whatever the Python version's highest
    assert serde.from_bytes(data) == obj


def test_pickle_refusals_are_serde_errors() -> None:
    with pytest.raises(SerdeError, match="pickle serde cannot encode <function"):
        PickleSerde().to_bytes(lambda: 1)
    with pytest.raises(SerdeError, match="pickle serde cannot decode"):
        PickleSerde().from_bytes(b"not a pickle")
    with pytest.raises(SerdeError, match="pickle serde cannot decode"):
        PickleSerde().from_bytes(b"\x80\x05\x95")  # truncated


def test_pickle_is_a_registry_and_a_system_serde() -> None:
    assert type(SerdeRegistry(Config()).get("pickle")) is PickleSerde
    system_serde = serde_for("pickle", "systems.log.samza.msg.serde")
    assert type(system_serde) is PickleSerde
    assert system_serde.from_bytes(system_serde.to_bytes({"k": (1, 2)})) == {"k": (1, 2)}
    with pytest.raises(SamzaError):
        system_serde.from_bytes(b"junk")


# -- json: one behaviour for stores and streams ---------------------------------------------------------
def test_json_refuses_nan_and_infinities_naming_where_they_are() -> None:
    with pytest.raises(SerdeError, match=r"value\['b'\]\[1\] = nan has no JSON form"):
        JsonSerde().to_bytes({"a": 1, "b": [0.5, math.nan]})
    with pytest.raises(SerdeError, match=r"value = inf has no JSON form"):
        JsonSerde().to_bytes(math.inf)


def test_json_refuses_dict_keys_that_cannot_be_sorted() -> None:
    with pytest.raises(SerdeError, match="dict keys of different types cannot be sorted"):
        JsonSerde().to_bytes({1: "a", "b": 2})
    assert JsonSerde().to_bytes({2: "a", 1: "b"}) == b'{"1":"b","2":"a"}'


def test_json_reads_utf16_and_bom_marked_json() -> None:
    serde = JsonSerde()
    assert serde.from_bytes('{"a":1}'.encode("utf-16")) == {"a": 1}
    assert serde.from_bytes(b'\xef\xbb\xbf{"a":1}') == {"a": 1}
    assert serde.to_bytes(7) == b"7" and serde.to_bytes(True) == b"true"
