"""The on-disk format of a durable log partition: a sequence of CRC-checked record batches.

A partition file is batches back to back, nothing else. A batch holds the records of one append (one
``send``, or up to :data:`MAX_BATCH_RECORDS` of a ``send_batch``) and is written with one ``write``
call. Layout, little-endian::

    header (40 bytes)
      magic      4s   b"SNL1"
      crc        u32  CRC-32 of every byte after this field: the rest of the header and the body
      base       u64  offset of the first record (a record's offset is base + its index)
      timestamp  u64  append time, ms since the epoch
      count      u32  records in the batch (>= 1)
      length     u32  body bytes
      flags      u32  KEYS: a key column follows the values; HEADERS: a headers column follows;
                      NULLS: some length is -1 (a None key or value); TIMESTAMPS: a timestamp column
                      follows the length columns
      reserved   u32  0
    body, column by column
      value lengths   count x i32 (-1: None, a tombstone)
      key lengths     count x i32 (when KEYS; else every key is None)
      header lengths  count x i32 (when HEADERS)
      timestamps      count x i64 (when TIMESTAMPS): each record's event time, ms; -2**63 for a record
                      without one (a reader takes the batch's append time for it)
      value bytes, then key bytes, then header bytes, each concatenated in record order

The timestamp column is written only when some record of the batch has an event time, so batches without
any (and files written before the column existed) look as they always did.

Columns make both directions cheap in Python: a batch is encoded with one ``b"".join`` per column and
one array of lengths, and decoded by slicing the body at the running sums of the lengths.

A record's headers (``(name, value)`` pairs) are encoded per record as u16 count, then per header
u16 name length, UTF-8 name, u32 value length, value; a None value (Kafka's null header value) has length
0xFFFFFFFF and no bytes. A record without headers in a batch with a headers column has an empty entry
(length 0). Both were added after files existed; neither occurs in those (a value of 4 GiB cannot, and
their header entries were never empty), so they read as they always did.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from samza_nb.api.streams import NO_HEADERS, Headers
from samza_nb.errors import SamzaError

MAGIC: Final = b"SNL1"
HEADER: Final = struct.Struct("<4sIQQIIII")
HEADER_SIZE: Final = HEADER.size
CRC_START: Final = 8
"""The CRC covers the batch from this byte (after magic and the CRC field)."""

KEYS: Final = 1
HEADERS: Final = 2
NULLS: Final = 4
TIMESTAMPS: Final = 8
NO_TIMESTAMP: Final = -(2**63)
"""A record's entry in the timestamp column when it has no event time."""
MAX_BATCH_RECORDS: Final = 16384
"""The most records one batch holds; a larger ``send_batch`` writes several batches."""
MAX_BODY: Final = 0x7FFFFFFF

_HEADER_COUNT = struct.Struct("<H")
_NAME_LEN = struct.Struct("<H")
_VALUE_LEN = struct.Struct("<I")

_NULL_VALUE: Final = 0xFFFFFFFF
_MAX_HEADERS: Final = 0xFFFF  # the most headers per record, and the longest name in bytes (2-byte fields)
"""The value length of a None header value."""


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The header of the batch at byte ``position``: offsets ``base`` .. ``base + count - 1``."""

    position: int
    base: int
    timestamp: int
    count: int
    length: int
    flags: int

    @property
    def end(self) -> int:
        """The byte position right after this batch (where the next one starts)."""
        return self.position + HEADER_SIZE + self.length

    @property
    def upcoming(self) -> int:
        """The offset of the record after this batch."""
        return self.base + self.count


@dataclass(frozen=True, slots=True)
class Batch:
    """The decoded records of one batch: ``values`` in offset order from ``base``; ``keys`` and
    ``headers`` None when every record has none; ``timestamps`` each record's event time (None for one
    without), or None when no record has one. ``timestamp`` is the batch's append time."""

    base: int
    timestamp: int
    values: Sequence[bytes | None]
    keys: Sequence[bytes | None] | None
    headers: Sequence[Headers] | None
    timestamps: Sequence[int | None] | None = None


class BatchDamage(Exception):
    """A batch that is not what was written: ``reason`` says how (bad magic, CRC mismatch, ...)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# -- encoding -------------------------------------------------------------------------------------------
def as_bytes(value: Any, what: str) -> bytes | None:
    """``value`` as stored: bytes unchanged, str as UTF-8, None as None; a SamzaError naming ``what``
    (e.g. "the value of a message to log stream s") for anything else."""
    if value is None or type(value) is bytes:
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    text = repr(value)
    raise SamzaError(
        f"{what} is a {type(value).__name__} ({text[:60] + '...' if len(text) > 60 else text}): the durable "
        "log stores bytes or str (as UTF-8); serialize it first"
    )


def _cached(cache: dict[int, struct.Struct], code: str, count: int) -> struct.Struct:
    """The struct of ``count`` items of struct ``code`` (cached: batches mostly have the same size)."""
    layout = cache.get(count)
    if layout is None:
        if len(cache) > 64:
            cache.clear()
        layout = cache[count] = struct.Struct(f"<{count}{code}")
    return layout


def _lengths(count: int) -> struct.Struct:
    """The struct of a column of ``count`` lengths."""
    return _cached(_LENGTHS, "i", count)


def _stamps(count: int) -> struct.Struct:
    """The struct of a timestamp column of ``count`` records."""
    return _cached(_STAMPS, "q", count)


_LENGTHS: dict[int, struct.Struct] = {}
_STAMPS: dict[int, struct.Struct] = {}
_EQUAL: dict[tuple[int, int], struct.Struct] = {}
_ITEM_FORMATS: Final = tuple(f"{size}s" for size in range(4096))
"""The struct format of an item of each size below 4 KiB (looked up, not formatted, per item)."""


def _column(items: Sequence[Any], what: str) -> tuple[bytes, bytes, bool]:
    """(lengths, concatenated bytes, whether some item is None) of a column of keys or values."""
    layout = _lengths(len(items))
    try:
        blob = b"".join(items)  # TypeError when an item is not bytes-like (None, str, ...)
        return layout.pack(*map(len, items)), blob, False
    except TypeError:
        fixed = [as_bytes(item, what) for item in items]
        blob = b"".join([item for item in fixed if item is not None])
        lengths = layout.pack(*[-1 if item is None else len(item) for item in fixed])
        return lengths, blob, None in fixed


def _timestamp_column(timestamps: Sequence[int | None], count: int, what: str) -> bytes:
    if len(timestamps) != count:
        raise ValueError(f"{len(timestamps)} timestamps for a batch of {count} records")
    try:
        return _stamps(count).pack(*[NO_TIMESTAMP if ts is None else ts for ts in timestamps])
    except struct.error:
        bad = next(ts for ts in timestamps if ts is not None and not _is_stamp(ts))
        raise SamzaError(f"{what}: timestamp {bad!r} is not an int of ms in 64 bits") from None


def _is_stamp(value: object) -> bool:
    return isinstance(value, int) and NO_TIMESTAMP < value < 2**63


def encode_headers(headers: Iterable[tuple[str, bytes | None]]) -> bytes:
    """One record's headers in the batch's header column encoding (empty for none)."""
    items = tuple(headers)
    if not items:
        return b""
    if len(items) > _MAX_HEADERS:
        raise SamzaError(f"{len(items)} headers on one record: the durable log holds at most {_MAX_HEADERS}")
    parts = [_HEADER_COUNT.pack(len(items))]
    for name, value in items:
        try:
            raw_name = name.encode("utf-8")
        except UnicodeEncodeError:
            raise SamzaError(f"header name {name!r} is not valid text (it cannot be UTF-8)") from None
        if len(raw_name) > _MAX_HEADERS:
            raise SamzaError(
                f"header name {name[:40]!r}... is {len(raw_name)} bytes: the durable log holds names of at "
                f"most {_MAX_HEADERS} bytes"
            )
        raw_value = as_bytes(value, f"header {name!r}")
        if raw_value is None:
            parts += [_NAME_LEN.pack(len(raw_name)), raw_name, _VALUE_LEN.pack(_NULL_VALUE)]
        else:
            parts += [_NAME_LEN.pack(len(raw_name)), raw_name, _VALUE_LEN.pack(len(raw_value)), raw_value]
    return b"".join(parts)


def decode_headers(data: bytes) -> Headers:
    """The headers encoded by :func:`encode_headers` (the shared empty tuple for none)."""
    if not data:
        return NO_HEADERS
    (count,) = _HEADER_COUNT.unpack_from(data, 0)
    pos = _HEADER_COUNT.size
    result: list[tuple[str, bytes | None]] = []
    for _ in range(count):
        (name_len,) = _NAME_LEN.unpack_from(data, pos)
        pos += _NAME_LEN.size
        name = data[pos : pos + name_len].decode("utf-8")
        pos += name_len
        (value_len,) = _VALUE_LEN.unpack_from(data, pos)
        pos += _VALUE_LEN.size
        if value_len == _NULL_VALUE:
            result.append((name, None))
        else:
            result.append((name, data[pos : pos + value_len]))
            pos += value_len
    return tuple(result)


def encode_batch(
    base: int,
    timestamp: int,
    values: Sequence[Any],
    keys: Sequence[Any] | None = None,
    headers: Sequence[bytes] | None = None,
    what: str = "a record",
    timestamps: Sequence[int | None] | None = None,
) -> list[bytes]:
    """One batch of ``values`` (bytes, str or None) with offsets from ``base``; ``keys`` None when no
    record has a key; ``headers`` per record already encoded (:func:`encode_headers`) or None;
    ``timestamps`` each record's event time (ms, or None), or None when no record has one (the column is
    left out then, also when every entry is None). Returned as the consecutive parts of the batch, to be
    written with one ``writev`` without joining them."""
    count = len(values)
    if not 0 < count <= MAX_BATCH_RECORDS:
        raise ValueError(f"a batch holds 1..{MAX_BATCH_RECORDS} records, not {count}")
    value_lengths, value_blob, nulls = _column(values, f"the value of {what}")
    columns = [value_lengths]
    blobs = [value_blob]
    flags = NULLS if nulls else 0
    if keys is not None:
        key_lengths, key_blob, key_nulls = _column(keys, f"the key of {what}")
        columns.append(key_lengths)
        blobs.append(key_blob)
        flags |= KEYS | (NULLS if key_nulls else 0)
    if headers is not None:
        header_lengths, header_blob, _ = _column(headers, f"the headers of {what}")
        columns.append(header_lengths)
        blobs.append(header_blob)
        flags |= HEADERS
    if timestamps is not None and timestamps.count(None) != len(timestamps):
        columns.append(_timestamp_column(timestamps, count, what))
        flags |= TIMESTAMPS
    parts = columns + blobs
    length = sum(map(len, parts))
    if length > MAX_BODY:
        raise SamzaError(f"{what}: a batch of {count} records is {length} bytes, more than a batch holds")
    head = bytearray(HEADER.pack(MAGIC, 0, base, timestamp, count, length, flags, 0))
    crc = zlib.crc32(memoryview(head)[CRC_START:])
    for part in parts:
        crc = zlib.crc32(part, crc)
    struct.pack_into("<I", head, 4, crc)
    return [bytes(head), *parts]


# -- decoding -------------------------------------------------------------------------------------------
def read_header(buf: bytes, at: int, position: int) -> BatchHeader:
    """The header at ``buf[at:]`` (which holds at least :data:`HEADER_SIZE` bytes), the batch at byte
    ``position`` of its file; BatchDamage when it is not one."""
    magic, _crc, base, timestamp, count, length, flags, _ = HEADER.unpack_from(buf, at)
    if magic != MAGIC:
        raise BatchDamage(f"no batch starts here (magic {magic!r}, expected {MAGIC!r})")
    if count < 1 or length < 4 * count or flags & ~(KEYS | HEADERS | NULLS | TIMESTAMPS):
        raise BatchDamage(f"the batch header is damaged (count {count}, length {length}, flags {flags})")
    return BatchHeader(position, base, timestamp, count, length, flags)


def check_crc(buf: bytes, header: BatchHeader, offset_in_buf: int = 0) -> None:
    """BatchDamage unless the batch of ``header`` has the CRC it was written with; ``buf[0]`` is byte
    ``offset_in_buf`` of the file, and ``buf`` holds the whole batch."""
    start = header.position - offset_in_buf
    (stored,) = struct.unpack_from("<I", buf, start + 4)
    actual = zlib.crc32(memoryview(buf)[start + CRC_START : start + HEADER_SIZE + header.length])
    if actual != stored:
        raise BatchDamage(f"CRC mismatch (stored {stored:#010x}, computed {actual:#010x})")


def _split(buf: bytes, lengths: tuple[int, ...], start: int, nulls: bool) -> tuple[Sequence[Any], int]:
    """The items of a column whose bytes start at ``buf[start]``, and where they end."""
    if not nulls:
        # struct cuts the column in C: a format of one "<n>s" per item (cached when all are equal).
        count, first = len(lengths), lengths[0]
        if lengths.count(first) == count:
            layout = _EQUAL.get((first, count))
            if layout is None:
                if len(_EQUAL) > 64:
                    _EQUAL.clear()
                layout = _EQUAL[(first, count)] = struct.Struct(f"<{count * f'{first}s'}")
            return layout.unpack_from(buf, start), start + first * count
        try:
            text = "".join(map(_ITEM_FORMATS.__getitem__, lengths))
        except IndexError:  # an item of 4 KiB or more
            text = "s".join(map(str, lengths)) + "s"
        return struct.unpack_from("<" + text, buf, start), start + sum(lengths)
    items: list[bytes | None] = []
    pos = start
    for length in lengths:
        if length < 0:
            items.append(None)
        else:
            items.append(buf[pos : pos + length])
            pos += length
    return items, pos


def decode_batch(buf: bytes, header: BatchHeader, offset_in_buf: int = 0) -> Batch:
    """The records of the batch of ``header`` held in ``buf`` (``buf[0]`` is byte ``offset_in_buf`` of
    the file); checks the CRC first (BatchDamage when it does not match)."""
    check_crc(buf, header, offset_in_buf)
    count, flags = header.count, header.flags
    pos = header.position - offset_in_buf + HEADER_SIZE
    end = pos + header.length
    columns = 1 + bool(flags & KEYS) + bool(flags & HEADERS)
    stamped = bool(flags & TIMESTAMPS)
    if (4 * columns + 8 * stamped) * count > header.length:
        raise BatchDamage("the batch's length columns do not fit in its body")
    layout = _lengths(count)
    lengths = []
    for _ in range(columns):
        lengths.append(layout.unpack_from(buf, pos))
        pos += 4 * count
    timestamps: Sequence[int | None] | None = None
    if stamped:
        stamps = _stamps(count).unpack_from(buf, pos)
        timestamps = (
            [None if ts == NO_TIMESTAMP else ts for ts in stamps] if NO_TIMESTAMP in stamps else stamps
        )
        pos += 8 * count
    nulls = bool(flags & NULLS)
    values, pos = _split(buf, lengths[0], pos, nulls)
    keys = headers = None
    if flags & KEYS:
        keys, pos = _split(buf, lengths[1], pos, nulls)
    if flags & HEADERS:
        raw, pos = _split(buf, lengths[-1], pos, False)
        headers = [decode_headers(item) for item in raw]
    if pos != end:
        raise BatchDamage(f"the batch's lengths add up to {pos - end:+d} bytes more than its body")
    return Batch(header.base, header.timestamp, values, keys, headers, timestamps)


__all__ = [
    "HEADER_SIZE",
    "MAGIC",
    "MAX_BATCH_RECORDS",
    "NO_TIMESTAMP",
    "Batch",
    "BatchDamage",
    "BatchHeader",
    "Headers",
    "as_bytes",
    "check_crc",
    "decode_batch",
    "decode_headers",
    "encode_batch",
    "encode_headers",
    "read_header",
]
