"""``DurableLog``: the public handle of a durable log directory (partitioned, append-only streams).

A stream is a directory ``<dir>/<stream>/`` holding ``stream.json`` (its partition count, fixed at
creation) and per partition a file of CRC-checked batches and a flush mark (:mod:`.partition`).
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Final

from samza_nb.api.streams import NO_HEADERS, Headers
from samza_nb.errors import SamzaError
from samza_nb.systems.log.format import Batch, as_bytes, encode_headers
from samza_nb.systems.log.partition import PartitionLog
from samza_nb.systems.log.wake import FlushWaiter
from samza_nb.systems.offsets import parse_integer_offset
from samza_nb.systems.partitioner import key_partition

LOG_OFFSET: Final = "a durable log offset (expected 0, 1, ...)"
"""What an offset of the durable log is, for errors about one."""
STREAM_FILE: Final = "stream.json"
FORMAT_VERSION: Final = 1
_LEGAL_STREAM = re.compile(r"^[A-Za-z0-9._-]{1,249}$")

_first, _second, _third = itemgetter(0), itemgetter(1), itemgetter(2)

Record = tuple[Any, Any, int | None]
"""What :meth:`DurableLog.send_batch` takes: ``(key, value, partition or None)``."""


def check_stream_name(stream: str) -> None:
    """A SamzaError unless ``stream`` can name a log stream (letters, digits, ``._-``; not ``.``/``..``)."""
    if not isinstance(stream, str) or not _LEGAL_STREAM.match(stream) or stream in (".", ".."):
        raise SamzaError(
            f"{stream!r} cannot name a durable log stream: use letters, digits, '.', '_' and '-' "
            "(at most 249 characters)"
        )


class DurableLog:
    """Partitioned, append-only, durable streams in ``directory`` (created if missing).

    Offsets are integers from 0, dense per partition. Several processes may append to one stream at once.
    ``send`` appends at once (its offset is final) but readers see records only once they are flushed
    (``flush``, of any process, makes them durable: fsync). Values and keys are bytes or str (stored as
    UTF-8); a None value is stored as None (a tombstone). Thread-safe.
    """

    def __init__(self, directory: str | os.PathLike[str], *, remote_writers: bool = False) -> None:
        self.directory = Path(directory).absolute()
        self.remote_writers = remote_writers
        """Other machines append to this log (a shared mount): waiters also look again every
        :data:`~samza_nb.systems.log.wake.FALLBACK_POLL_S` seconds, as inotify does not see their writes."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SamzaError(f"durable log directory {self.directory}: {exc}") from exc
        self._lock = threading.RLock()
        self._streams: dict[str, list[PartitionLog]] = {}
        self._round_robin: dict[str, int] = {}
        self._written: set[PartitionLog] = set()
        self._closed = False

    def __repr__(self) -> str:
        return f"DurableLog({str(self.directory)!r})"

    def __enter__(self) -> DurableLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- streams --------------------------------------------------------------------------------------
    def create_stream(self, stream: str, partitions: int) -> None:
        """Create ``stream`` with ``partitions`` partitions; nothing when it exists with that many; a
        SamzaError when it exists with another count. Safe when several processes create it at once."""
        check_stream_name(stream)
        if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
            raise SamzaError(
                f"durable log stream {stream!r}: partitions must be an integer >= 1, not {partitions!r}"
            )
        path = self.directory / stream
        path.mkdir(exist_ok=True)
        meta = path / STREAM_FILE
        if not meta.exists():
            temp = path / f".{STREAM_FILE}.{os.getpid()}.{uuid.uuid4().hex}"
            # 0o644 & ~umask, like the segments: never world-writable, whatever the umask.
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(json.dumps({"format": FORMAT_VERSION, "partitions": partitions}))
            try:
                os.link(temp, meta)  # atomic: exactly one creator wins
            except FileExistsError:
                pass
            finally:
                temp.unlink()
        existing = self.partitions(stream)
        if existing != partitions:
            raise SamzaError(
                f"durable log stream {stream!r} in {self.directory} exists with {existing} partitions, "
                f"not {partitions}"
            )

    def has_stream(self, stream: str) -> bool:
        """True when ``stream`` exists."""
        return (self.directory / stream / STREAM_FILE).is_file()

    def streams(self) -> list[str]:
        """The streams in the directory, sorted."""
        return sorted(p.parent.name for p in self.directory.glob(f"*/{STREAM_FILE}"))

    def partitions(self, stream: str) -> int:
        """How many partitions ``stream`` has; a SamzaError naming it (and the known ones) when missing."""
        return len(self._partitions(stream))

    def _partitions(self, stream: str) -> list[PartitionLog]:
        parts = self._streams.get(stream)
        if parts is not None:
            return parts
        with self._lock:
            if self._closed:
                raise SamzaError(f"{self} is closed")
            meta = self.directory / stream / STREAM_FILE
            try:
                info = json.loads(meta.read_text())
                count = int(info["partitions"])
                version = int(info.get("format", FORMAT_VERSION))
            except FileNotFoundError:
                check_stream_name(stream)
                known = ", ".join(self.streams()) or "none"
                raise SamzaError(
                    f"durable log {self.directory} has no stream {stream!r} (streams: {known})"
                ) from None
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise SamzaError(f"durable log stream {stream!r}: {meta} is not readable: {exc!r}") from None
            if version != FORMAT_VERSION:
                raise SamzaError(
                    f"durable log stream {stream!r}: {meta} has format {version}, "
                    f"this version reads format {FORMAT_VERSION}"
                )
            parts = [PartitionLog(meta.parent, p, f"{stream}#{p}") for p in range(count)]
            return self._streams.setdefault(stream, parts)

    def _partition(self, stream: str, partition: int) -> PartitionLog:
        parts = self._partitions(stream)
        if isinstance(partition, bool) or not isinstance(partition, int) or not 0 <= partition < len(parts):
            raise SamzaError(
                f"durable log stream {stream!r} has partitions 0..{len(parts) - 1}; "
                f"partition {partition!r} does not exist"
            )
        return parts[partition]

    # -- writing --------------------------------------------------------------------------------------
    def send(
        self,
        stream: str,
        value: Any,
        key: Any = None,
        partition: int | None = None,
        headers: Iterable[tuple[str, bytes | None]] = (),
        timestamp: int | None = None,
    ) -> tuple[int, int]:
        """Append one record (``timestamp``: its event time in ms, or None; ``headers``: ``(name, value)``
        pairs, value bytes, str as UTF-8, or None); returns ``(partition, offset)``. Partition:
        ``partition``, else Kafka's murmur2 of the key, else round robin. Visible to readers after the next
        :meth:`flush`."""
        what = f"a message to durable log stream {stream!r}"
        key_bytes = as_bytes(key, f"the key of {what}")
        number = self._place(stream, key_bytes, partition)
        encoded = tuple(headers)
        offset = self.append(
            stream,
            number,
            [value],
            None if key_bytes is None else [key_bytes],
            [encode_headers(encoded)] if encoded else None,
            None if timestamp is None else [timestamp],
        )
        return number, offset

    def send_batch(
        self,
        stream: str,
        records: Iterable[Record],
        timestamps: Sequence[int | None] | None = None,
        headers: Sequence[Headers] | None = None,
    ) -> None:
        """Append ``records`` (``(key, value, partition or None)`` each, placed as :meth:`send` places
        them), in order per partition, with one write per partition. ``timestamps``: each record's event
        time (ms, or None), or None when no record has one; ``headers``: each record's headers (``()``
        for none), or None when no record has any."""
        items = records if isinstance(records, Sequence) else list(records)
        if not items:
            return
        if timestamps is not None and len(timestamps) != len(items):
            raise ValueError(f"{len(timestamps)} timestamps for {len(items)} records")
        encoded: list[bytes] | None = None
        if headers is not None:
            if len(headers) != len(items):
                raise ValueError(f"{len(headers)} headers for {len(items)} records")
            encoded = [encode_headers(h) if h else b"" for h in headers]
        keys = list(map(_first, items))
        values = list(map(_second, items))
        numbers = list(map(_third, items))
        count = self.partitions(stream)
        no_keys = keys.count(None) == len(keys)
        if numbers.count(None) == len(numbers):
            if no_keys:
                self._round_robin_batch(stream, values, count, timestamps, encoded)
                return
            numbers = [
                self._place(stream, as_bytes(key, f"a key of stream {stream!r}"), None) for key in keys
            ]
        # Each partition's records by their index (one append per record), then each column picked at C
        # speed: a column that no record has (timestamps, headers) costs nothing.
        groups: dict[int, list[int]] = {}
        for index, number in enumerate(numbers):
            if number is None:
                number = self._place(stream, as_bytes(keys[index], f"a key of stream {stream!r}"), None)
            group = groups.get(number)
            if group is None:
                self._partition(stream, number)  # a partition that does not exist raises, naming it
                group = groups[number] = []
            group.append(index)
        for number, indices in groups.items():
            self.append(
                stream,
                number,
                _pick(values, indices),
                None if no_keys else _pick(keys, indices),
                None if encoded is None else _column(_pick(encoded, indices)),
                None if timestamps is None else _pick(timestamps, indices),
            )

    def _round_robin_batch(
        self,
        stream: str,
        values: Sequence[Any],
        count: int,
        timestamps: Sequence[int | None] | None,
        headers: Sequence[bytes] | None,
    ) -> None:
        with self._lock:
            start = self._round_robin.get(stream, 0)
            self._round_robin[stream] = (start + len(values)) % count
        if count == 1:
            self.append(stream, 0, values, None, _column(headers), timestamps)
            return
        for number in range(count):
            first = (number - start) % count
            chunk = values[first::count]
            if chunk:
                stamps = None if timestamps is None else timestamps[first::count]
                heads = None if headers is None else _column(headers[first::count])
                self.append(stream, number, chunk, None, heads, stamps)

    def _place(self, stream: str, key: bytes | None, partition: int | None) -> int:
        count = self.partitions(stream)
        if partition is not None:
            self._partition(stream, partition)
            return partition
        if key is not None:
            return key_partition(key, count)
        with self._lock:
            number = self._round_robin.get(stream, 0)
            self._round_robin[stream] = (number + 1) % count
        return number

    def append(
        self,
        stream: str,
        partition: int,
        values: Sequence[Any],
        keys: Sequence[Any] | None = None,
        headers: Sequence[bytes] | None = None,
        timestamps: Sequence[int | None] | None = None,
    ) -> int:
        """Append records to one partition as given (``keys`` None: no keys; ``headers``: each record's
        encoded headers, or None; ``timestamps``: each record's event time, or None); returns the first
        record's offset."""
        part = self._partition(stream, partition)
        first = part.append(
            values,
            keys,
            headers,
            int(time.time() * 1000),
            f"a message to durable log stream {stream!r}",
            timestamps,
        )
        with self._lock:
            self._written.add(part)
        return first

    def flush(self) -> None:
        """Make every record this handle appended durable (fsync) and visible to readers."""
        with self._lock:
            written, self._written = self._written, set()
        for part in written:
            part.flush()

    # -- reading --------------------------------------------------------------------------------------
    def read(self, stream: str, partition: int, start: str | int = "0") -> Iterator[tuple[int, Any, Any]]:
        """The flushed records of one partition from offset ``start``: ``(offset, key, value)`` with key
        and value bytes or None. Reads to the end flushed when the iteration began."""
        begin = parse_integer_offset(f"durable log stream {stream!r}", str(start), LOG_OFFSET)
        batches = self.batches(stream, partition, begin)
        # No generator frame per record: C iterators chained over the batches' records.
        return chain.from_iterable(map(_records, repeat(begin), batches))

    def read_records(
        self, stream: str, partition: int, start: str | int = "0"
    ) -> Iterator[tuple[int, Any, Any, Headers]]:
        """:meth:`read` with each record's headers: ``(offset, key, value, headers)``, headers ``()`` for
        a record without any."""
        begin = parse_integer_offset(f"durable log stream {stream!r}", str(start), LOG_OFFSET)
        batches = self.batches(stream, partition, begin)
        return chain.from_iterable(map(_records_with_headers, repeat(begin), batches))

    def batches(self, stream: str, partition: int, start: int = 0) -> Iterator[Batch]:
        """The flushed batches of one partition from the one holding offset ``start`` (which may begin
        before it), each checked against its CRC: damage is a SamzaError naming file and offset."""
        return self._partition(stream, partition).batches(start)

    def upcoming(self, stream: str, partition: int) -> int:
        """The offset after the last flushed record of one partition (0 when none is)."""
        return self._partition(stream, partition).flushed()[0]

    def waiter(self, partitions: Iterable[tuple[str, int]]) -> FlushWaiter:
        """A :class:`FlushWaiter` woken by flushes of ``partitions`` (``(stream, partition)`` pairs)."""
        marks = []
        for stream, number in partitions:
            part = self._partition(stream, number)
            part.flushed()  # opens (and creates) the mark file
            marks.append(part.mark_path)
        return FlushWaiter(marks, remote_writers=self.remote_writers)

    def wait(self, stream: str, partition: int, offset: int, timeout: float) -> bool:
        """Block until offset ``offset`` of the partition is flushed (True) or ``timeout`` s pass
        (False); woken by the flush itself, in this process or another, never by polling."""
        deadline = time.monotonic() + timeout
        waiter = self.waiter([(stream, partition)])
        try:
            while self.upcoming(stream, partition) <= offset:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                waiter.wait(remaining)
            return True
        finally:
            waiter.close()

    def close(self) -> None:
        """Flush and close every file (idempotent); the handle cannot be used afterwards."""
        with self._lock:
            if self._closed:
                return
            self.flush()
            self._closed = True
            parts = [part for parts in self._streams.values() for part in parts]
            self._streams.clear()
        for part in parts:
            part.close()


def _records(begin: int, batch: Batch) -> Iterator[tuple[int, Any, Any]]:
    """``(offset, key, value)`` of the records of ``batch`` from offset ``begin``."""
    skip = max(begin - batch.base, 0)
    values = batch.values
    offsets = range(batch.base + skip, batch.base + len(values))
    keys: Iterable[Any] = repeat(None) if batch.keys is None else islice(batch.keys, skip, None)
    return zip(offsets, keys, islice(values, skip, None) if skip else values, strict=False)


def _records_with_headers(begin: int, batch: Batch) -> Iterator[tuple[int, Any, Any, Headers]]:
    """``(offset, key, value, headers)`` of the records of ``batch`` from offset ``begin``."""
    skip = max(begin - batch.base, 0)
    headers: Iterable[Headers] = (
        repeat(NO_HEADERS) if batch.headers is None else islice(batch.headers, skip, None)
    )
    return (
        (offset, key, value, head)
        for (offset, key, value), head in zip(_records(begin, batch), headers, strict=False)
    )


def _pick(column: Sequence[Any], indices: list[int]) -> list[Any]:
    """The items of ``column`` at ``indices``, in that order."""
    return list(map(column.__getitem__, indices))


def _column(headers: Sequence[bytes] | None) -> Sequence[bytes] | None:
    """A batch's encoded headers column, or None when no record of it has headers."""
    return headers if headers is not None and any(headers) else None


__all__ = ["LOG_OFFSET", "DurableLog", "Record", "check_stream_name"]
