"""The digests of a recording's input messages (``digests.bin``, recording format version 3), so that a
replay stops at the first input message that is not the one the recorded run read.

A message's digest is 64 bits from its value, XOR its key's mixed when it has a key (:func:`digest`): an
``int`` of 64 bits itself (a larger one its ``hash``, the same in every process), CRC-32 of a ``str``'s
UTF-8 or of ``bytes``, 0 for None, CRC-32 of the ``repr`` of anything else (in-memory streams carry Python
objects), with the elements of any set in it sorted (a set's order depends on the process's hash seed). A
batch is digested as the container buffers what it polled (a batch of ``int`` values without keys in one
C-level conversion). A value whose ``repr`` is not stable across runs (an object's default
``repr``, with its address) is not checked at replay.

``digests.bin`` is a run of batch records: varint partition index (the header's table), varint count,
varint 0 and the first offset (varint length, UTF-8) when the batch's offsets are consecutive integers,
else varint 1 and each offset; then ``count`` little-endian signed 64-bit digests. A file cut short reads
as its whole records.
"""

from __future__ import annotations

import sys
import zlib
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from samza_nb.container.recording.recording import ByteReader, int_offset
from samza_nb.container.recording.recording import write_varint as _varint

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope

DIGESTS = "digests.bin"
"""The file of a recording that holds its input messages' digests (version 3 on)."""

_crc32 = zlib.crc32
UNSTABLE = " at 0x"
"""What a ``repr`` holding an object's address contains (not checked: another run has another address)."""


def digest(envelope: IncomingMessageEnvelope) -> int:
    """The digest of one message (what :func:`digests` computes for each of a batch)."""
    value = _one(envelope.message)
    return value if envelope.key is None else value ^ _key(envelope.key)


def digests(envelopes: Sequence[IncomingMessageEnvelope]) -> array[int]:
    """The digest of each of ``envelopes``, in order. A batch of ``int`` values without keys is one C-level
    conversion (its digests are the values); others take a comprehension."""
    values = [e.message for e in envelopes]
    keys = [e.key for e in envelopes]
    if keys.count(None) != len(keys):
        pairs = zip(keys, values, strict=True)
        return array("q", [_one(v) if k is None else _one(v) ^ _key(k) for k, v in pairs])
    try:
        return array("q", values)  # ints (bools too) of 64 bits: the digest is the value
    except (TypeError, OverflowError):
        return array("q", [_crc32(v.encode()) if type(v) is str and v.isascii() else _one(v) for v in values])


_LOW, _HIGH = -(1 << 63), (1 << 63) - 1
_MIX = 0x9E3779B97F4A7C15


def matches(envelope: IncomingMessageEnvelope, recorded: int) -> bool:
    """True when ``recorded`` is the message's digest, or it cannot be checked (its ``repr`` names an
    object's address), or it is the digest a recording made before sets were sorted gave it."""
    if recorded == digest(envelope) or not stable(envelope):
        return True
    value = _one(envelope.message, False)
    key = envelope.key
    return recorded == (value if key is None else value ^ _key(key, False))


def _one(item: Any, canonical: bool = True) -> int:
    """One key's or value's digest (a signed 64-bit value): an ``int`` of 64 bits itself (else its
    ``hash``, the same in every process), CRC-32 of a ``str``'s UTF-8 or of ``bytes``, 0 for None, else
    CRC-32 of its ``repr`` (with the elements of the sets in it sorted: :func:`_canonical`)."""
    if isinstance(item, int):
        return int(item) if _LOW <= item <= _HIGH else hash(item)
    kind = type(item)
    if kind is str:
        return _crc32(item.encode("utf-8", "surrogatepass"))
    if kind is bytes:
        return _crc32(item)
    if item is None:
        return 0
    text = repr(item)
    if canonical and (kind in _ORDERLESS or (kind in _NESTING and "{" in text)):
        text = _canonical(item)
    return _crc32(text.encode())


_ORDERLESS = (set, frozenset)
_NESTING = (tuple, list, dict)


def _canonical(item: Any) -> str:
    """``repr(item)``, but with every set's elements in sorted order (a set's own order follows the hashes
    of its elements, which for ``str`` and ``bytes`` change from process to process: PYTHONHASHSEED)."""
    kind = type(item)
    if kind in _ORDERLESS:
        inner = ", ".join(sorted(_canonical(element) for element in item))
        if kind is set:
            return "{" + inner + "}" if inner else "set()"
        return "frozenset({" + inner + "})" if inner else "frozenset()"
    if kind is tuple:
        return "(" + ", ".join(_canonical(e) for e in item) + ("," if len(item) == 1 else "") + ")"
    if kind is list:
        return "[" + ", ".join(_canonical(e) for e in item) + "]"
    if kind is dict:
        return "{" + ", ".join(f"{_canonical(k)}: {_canonical(v)}" for k, v in item.items()) + "}"
    return repr(item)


def _key(key: Any, canonical: bool = True) -> int:
    """What a key adds (XOR) to its value's digest: its digest mixed (so a key and a value swapped
    differ), as a signed 64-bit value."""
    mixed = (_one(key, canonical) * _MIX + 1) & 0xFFFFFFFFFFFFFFFF
    return mixed - (1 << 64) if mixed > _HIGH else mixed


def describe(envelope: IncomingMessageEnvelope) -> str:
    """The message's key and value as a replay error shows them (shortened)."""
    text = f"key {envelope.key!r}, value {envelope.message!r}"
    return text if len(text) <= 120 else text[:117] + "..."


def _text(out: bytearray, text: str) -> None:
    data = text.encode()
    _varint(out, len(data))
    out += data


class DigestWriter:
    """Appends batch records to ``digests.bin`` (buffered: written with the schedule's flushes)."""

    def __init__(self, directory: Path) -> None:
        self._file: BinaryIO = open(directory / DIGESTS, "wb")  # noqa: SIM115 (closed by close())
        self.buffer = bytearray()

    def batch(self, ssp: int, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """Record the digests of a batch of partition ``ssp`` (end-of-stream included: never checked)."""
        out = self.buffer
        count = len(envelopes)
        _varint(out, ssp)
        _varint(out, count)
        first, last = int_offset(envelopes[0].offset), int_offset(envelopes[-1].offset)
        if first is not None and last == first + count - 1:
            out.append(0)
            _text(out, envelopes[0].offset)
        else:
            out.append(1)
            for envelope in envelopes:
                _text(out, envelope.offset)
        values = digests(envelopes)
        if sys.byteorder == "big":
            values.byteswap()
        out += values.tobytes()

    def flush(self) -> None:
        """Append the buffered records to the file."""
        if self.buffer and not self._file.closed:
            self._file.write(self.buffer)
            self._file.flush()
            self.buffer.clear()

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        self._file.close()


def read_digests(directory: Path, partitions: int) -> list[dict[str, int]] | None:
    """Each partition's recorded digests by offset (None: the recording has no ``digests.bin``)."""
    try:
        data = (directory / DIGESTS).read_bytes()
    except FileNotFoundError:
        return None
    tables: list[dict[str, int]] = [{} for _ in range(partitions)]
    reader = _Reader(data)
    while reader.position < len(data):
        try:
            ssp, _, listed, values = reader.batch()
            assert listed is not None
            offsets = listed
        except EOFError:  # a record cut short (a crash while writing): the whole ones before it count
            break
        if ssp < partitions:
            tables[ssp].update(zip(offsets, values, strict=True))
    return tables


def read_recorded(directory: Path, partitions: int) -> list[RecordedDigests] | None:
    """Each partition's :class:`RecordedDigests` (None: the recording has no ``digests.bin``)."""
    try:
        data = (directory / DIGESTS).read_bytes()
    except FileNotFoundError:
        return None
    recorded = [RecordedDigests() for _ in range(partitions)]
    reader = _Reader(data)
    while reader.position < len(data):
        try:
            ssp, first, offsets, values = reader.batch(listed=False)
        except EOFError:  # a record cut short (a crash while writing): the whole ones before it count
            break
        if ssp < partitions:
            recorded[ssp].add(first, offsets, values)
    return recorded


class _Reader(ByteReader):
    def batch(self, listed: bool = True) -> tuple[int, int | None, list[str] | None, array[int]]:
        """A batch record: partition, first offset (consecutive integers), its offsets (listed, or not
        consecutive; else None), digests."""
        ssp, count = self.varint(), self.varint()
        first: int | None = None
        offsets: list[str] | None = None
        if self.varint() == 0:
            first = int(self.text(self.varint()))
            if listed:
                offsets = [str(first + i) for i in range(count)]
        else:
            offsets = [self.text(self.varint()) for _ in range(count)]
        end = self.position + 8 * count
        if end > len(self.data):
            raise EOFError
        values = array("q")
        values.frombytes(self.data[self.position : end])
        if sys.byteorder == "big":
            values.byteswap()
        self.position = end
        return ssp, first, offsets, values


class RecordedDigests:
    """One partition's recorded digests, to check a polled batch against at once (a replay's runs take
    messages straight from the buffers, unseen one by one): the first message of a batch that differs."""

    def __init__(self) -> None:
        self.table: dict[str, int] = {}  # the digests of offsets outside the run below
        self._base: int | None = None  # consecutive integer offsets: the first, and every digest in order
        self._values = array("q")

    def add(self, first: int | None, offsets: list[str] | None, values: array[int]) -> None:
        """A recorded batch: of consecutive integer offsets from ``first``, else of ``offsets``. Batches
        that go on where the run of consecutive offsets ends extend it (no table entry per message)."""
        base = self._base
        if first is not None and (base is None or first == base + len(self._values)):
            if base is None:
                self._base = first
            self._values.extend(values)
            return
        if offsets is None:
            assert first is not None
            offsets = [str(first + i) for i in range(len(values))]
        for offset, value in zip(offsets, values, strict=True):
            number = int_offset(offset)
            if number is not None and self._base is not None and number == self._base + len(self._values):
                self._values.append(value)
            elif number is not None and self._base is None:
                self._base = number
                self._values.append(value)
            else:
                self.table[offset] = value

    def get(self, offset: str) -> int | None:
        """The recorded digest of the message at ``offset`` (None: none recorded)."""
        number, base = int_offset(offset), self._base
        if number is not None and base is not None and 0 <= number - base < len(self._values):
            return self._values[number - base]
        return self.table.get(offset)

    def first_difference(self, envelopes: Sequence[IncomingMessageEnvelope]) -> int:
        """The index of the first of ``envelopes`` (a batch as polled) whose recorded digest is not its own
        (a message whose ``repr`` is not stable is not checked), or -1. A batch of consecutive integer
        offsets over a recording's consecutive ones is compared at C speed."""
        count = len(envelopes)
        while count and envelopes[count - 1].is_end_of_stream:
            count -= 1
        if not count:
            return -1
        base = self._base
        first = int_offset(envelopes[0].offset) if base is not None else None
        if (
            first is not None
            and base is not None
            and int_offset(envelopes[count - 1].offset) == first + count - 1
        ):
            low, high = max(first, base), min(first + count, base + len(self._values))
            if low >= high:
                return -1
            recorded = self._values[low - base : high - base]
            if digests(envelopes[low - first : high - first]) == recorded:
                return -1
            offsets = range(low - first, high - first)
        else:
            offsets = range(count)
        for index in offsets:
            envelope = envelopes[index]
            expected = self.get(envelope.offset)
            if expected is not None and not matches(envelope, expected):
                return index
        return -1


def stable(envelope: IncomingMessageEnvelope) -> bool:
    """True when the message's ``repr`` names no object address (so its digest means the same in any
    run)."""
    texts: Any = (repr(envelope.message), repr(envelope.key))
    return not any(UNSTABLE in text for text in texts)


__all__ = [
    "DIGESTS",
    "DigestWriter",
    "RecordedDigests",
    "describe",
    "digest",
    "digests",
    "matches",
    "read_digests",
    "read_recorded",
    "stable",
]
