"""The batch format: round trips of every kind of record, and damage found by the CRC."""

from __future__ import annotations

import re
import struct
import zlib
from typing import Any

import pytest

from samza_nb.errors import SamzaError
from samza_nb.systems.log.format import (
    HEADER_SIZE,
    MAX_BATCH_RECORDS,
    BatchDamage,
    decode_batch,
    encode_headers,
    read_header,
)
from samza_nb.systems.log.format import (
    encode_batch as encode_parts,
)
from samza_nb.systems.partitioner import key_partition, murmur2


def encode_batch(*args: Any, **kwargs: Any) -> bytes:
    return b"".join(encode_parts(*args, **kwargs))


def roundtrip(values: list, keys: list | None = None, headers: list | None = None):  # type: ignore[no-untyped-def,type-arg]
    data = encode_batch(7, 1234, values, keys, headers)
    header = read_header(data, 0, 0)
    assert (header.base, header.count, header.end, header.timestamp) == (7, len(values), len(data), 1234)
    return decode_batch(data, header)


def test_values_without_keys() -> None:
    batch = roundtrip([b"a", b"", b"ccc"])
    assert list(batch.values) == [b"a", b"", b"ccc"]
    assert batch.keys is None and batch.headers is None and batch.base == 7


def test_none_values_and_keys_and_str_are_stored() -> None:
    batch = roundtrip([b"v", None, "é"], [None, b"k", "ключ"])
    assert list(batch.values) == [b"v", None, "é".encode()]
    assert list(batch.keys or ()) == [None, b"k", "ключ".encode()]


def test_headers_round_trip() -> None:
    headers = [encode_headers([("h", b"1"), ("é", b"")]), encode_headers([])]
    batch = roundtrip([b"a", b"b"], None, headers)
    assert list(batch.headers or ()) == [(("h", b"1"), ("é", b"")), ()]


def test_other_types_are_refused_naming_what() -> None:
    with pytest.raises(SamzaError, match=r"the value of a record is a int \(5\).*serialize it first"):
        encode_batch(0, 0, [b"a", 5])


def test_batch_size_limits() -> None:
    with pytest.raises(ValueError):
        encode_batch(0, 0, [])
    with pytest.raises(ValueError):
        encode_batch(0, 0, [b""] * (MAX_BATCH_RECORDS + 1))


@pytest.mark.parametrize("where", [4, 8, 20, HEADER_SIZE, HEADER_SIZE + 9, -1])
def test_any_flipped_byte_is_found(where: int) -> None:
    data = bytearray(encode_batch(0, 0, [b"hello", b"world"], [b"k", None]))
    data[where] ^= 0x40
    damaged = bytes(data)
    with pytest.raises(BatchDamage):
        decode_batch(damaged, read_header(damaged, 0, 0))


def test_a_damaged_magic_is_no_batch() -> None:
    data = bytearray(encode_batch(0, 0, [b"x"]))
    data[0] = ord("X")
    with pytest.raises(BatchDamage, match="no batch starts here"):
        read_header(bytes(data), 0, 0)


# Kafka's UtilsTest.testMurmur2 vectors (Java ints).
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("21", -973932308),
        ("foobar", -790332482),
        ("a-little-bit-long-string", -985981536),
        ("a-little-bit-longer-string", -1486304829),
        ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        ("abc", 479470107),
    ],
)
def test_murmur2_is_kafkas(text: str, expected: int) -> None:
    assert murmur2(text.encode()) == expected & 0xFFFFFFFF


def test_key_partition_is_kafkas_default_partitioner() -> None:
    assert key_partition(b"foobar", 7) == (-790332482 & 0x7FFFFFFF) % 7


@pytest.mark.parametrize("size", [0, 1, 100])
def test_values_of_one_size_round_trip(size: int) -> None:
    values = [bytes([i % 256]) * size for i in range(300)]
    assert list(roundtrip(values, [b"k%d" % i for i in range(300)]).values) == values


# -- event timestamps ------------------------------------------------------------------------------------
OLD_BATCH = bytes.fromhex(
    "534e4c3187ed079703000000000000000068e5cf8b010000030000001c000000050000000000000002000000ffffffff"
    "0100000001000000ffffffffffffffff7631786b"
)
"""A batch written before the timestamp column existed: base 3, appended at 1700000000000, values
[b"v1", None, b"x"], keys [b"k", None, None]."""


def test_a_batch_written_before_timestamps_still_decodes_and_is_what_is_written_without_them() -> None:
    header = read_header(OLD_BATCH, 0, 0)
    batch = decode_batch(OLD_BATCH, header)
    assert (batch.base, batch.timestamp, batch.timestamps) == (3, 1_700_000_000_000, None)
    assert list(batch.values) == [b"v1", None, b"x"]
    assert list(batch.keys or ()) == [b"k", None, None]
    unchanged = encode_batch(3, 1_700_000_000_000, [b"v1", None, "x"], [b"k", None, None])
    assert unchanged == OLD_BATCH
    # a timestamp column of nothing but None is left out
    assert encode_batch(
        3, 1_700_000_000_000, [b"v1", None, "x"], [b"k", None, None], None, "r", [None] * 3
    ) == (OLD_BATCH)


@pytest.mark.parametrize("with_keys", [False, True])
@pytest.mark.parametrize("with_headers", [False, True])
def test_timestamps_round_trip_with_every_other_column(with_keys: bool, with_headers: bool) -> None:
    values = [b"a", None, b"ccc", b""]
    keys = [b"k", None, b"", b"kk"] if with_keys else None
    headers = [encode_headers([("h", b"1")]), encode_headers([]), encode_headers([]), encode_headers([])]
    stamps = [5, None, -(2**62), 2**63 - 1]
    data = encode_batch(0, 99, values, keys, headers if with_headers else None, "r", stamps)
    header = read_header(data, 0, 0)
    assert header.flags & 8
    batch = decode_batch(data, header)
    assert list(batch.timestamps or ()) == stamps
    assert batch.timestamp == 99
    assert list(batch.values) == values
    assert (list(batch.keys) if batch.keys is not None else None) == keys
    assert (batch.headers is not None) == with_headers


def test_a_single_timestamp_is_enough_for_the_column() -> None:
    data = encode_batch(0, 1, [b"x"] * 3, None, None, "r", [None, None, 0])
    batch = decode_batch(data, read_header(data, 0, 0))
    assert list(batch.timestamps or ()) == [None, None, 0]
    assert len(data) == len(encode_batch(0, 1, [b"x"] * 3)) + 3 * 8


@pytest.mark.parametrize("bad", [1.5, 2**63, "7"])
def test_a_timestamp_that_is_not_an_int64_is_refused_naming_it(bad: object) -> None:
    with pytest.raises(SamzaError, match=re.escape(f"a message to s: timestamp {bad!r}")):
        encode_batch(0, 1, [b"a", b"b"], None, None, "a message to s", [1, bad])


def test_timestamps_must_match_the_records() -> None:
    with pytest.raises(ValueError, match="2 timestamps for a batch of 3"):
        encode_batch(0, 1, [b"a", b"b", b"c"], None, None, "r", [1, 2])


def test_a_timestamp_column_that_does_not_fit_is_damage() -> None:
    data = bytearray(encode_batch(0, 1, [b"a", b"b"]))
    header = read_header(bytes(data), 0, 0)
    struct.pack_into("<I", data, 32, header.flags | 8)  # claims a timestamp column it does not have
    struct.pack_into("<I", data, 4, zlib.crc32(bytes(data[8:])))
    damaged = read_header(bytes(data), 0, 0)
    with pytest.raises(BatchDamage, match="do not fit"):
        decode_batch(bytes(data), damaged)
