"""One partition of a durable log stream: its file of batches, its flush mark, appends and reads.

Files, in the stream's directory: ``<n>.log`` (the batches, see :mod:`.format`) and ``<n>.flushed`` (the
flush mark: the offset after the last durable record and the byte where it ends, with a CRC).

- Appends take an exclusive ``flock`` on the log file, so several processes append safely: under the lock
  a writer learns what others appended (the file grew past its last known end) and gives its batch the
  next offsets. Offsets are dense: every record gets base + index.
- ``flush`` fsyncs the file and moves the mark to its end, under the lock. fsync makes every byte of the
  file durable, whoever wrote it, so the mark never covers a byte that is not on disk.
- Readers read up to the mark only: a reader sees only flushed records.
- The first access of a process recovers the partition under the lock: the batches after the mark are
  checked (header, CRC, contiguous offsets), and whole ones are made durable (fsync) and visible: a
  record is visible once it is durable, and a mark lost in an OS crash hides nothing for long. A
  torn tail (a strict prefix of a batch, a last batch whose
  CRC fails, or zeros up to the end) is truncated with a warning; anything else is damage, a SamzaError
  naming the file, the byte and the offset. Batches before the mark are checked when they are read.
"""

from __future__ import annotations

import bisect
import fcntl
import logging
import os
import struct
import threading
import weakref
import zlib
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from samza_nb import crash_points
from samza_nb.errors import SamzaError
from samza_nb.systems.log.format import (
    HEADER_SIZE,
    MAGIC,
    MAX_BATCH_RECORDS,
    Batch,
    BatchDamage,
    BatchHeader,
    check_crc,
    decode_batch,
    encode_batch,
    read_header,
)
from samza_nb.systems.log.wake import notify_flushed

log = logging.getLogger(__name__)

CHUNK: Final = 1 << 20
"""Bytes read per ``pread`` when walking batches."""
_MARK = struct.Struct("<QQI")
_fdatasync = getattr(os, "fdatasync", os.fsync)


class PartitionLog:
    """Appends to and reads one partition's file; thread-safe. Opened on first use."""

    def __init__(self, directory: Path, partition: int, name: str) -> None:
        self.path = directory / f"{partition}.log"
        self.mark_path = directory / f"{partition}.flushed"
        self.name = name
        self._lock = threading.RLock()
        self._fd = -1
        self._mark_fd = -1
        self._finalizer: Any = None
        self._writable = True
        self._end = 0
        self._next = 0
        self._dirty = False
        self._bases: array[int] = array("q")
        self._positions: array[int] = array("q")
        self._indexed_end = 0
        self._indexed_upcoming = 0

    # -- opening and recovery -------------------------------------------------------------------------
    def _open(self) -> None:
        """Open the files (once) and, where writable, recover the partition; a partition whose recovery
        fails stays closed, so every later use fails the same way."""
        with self._lock:  # two threads' first uses must not open (and recover) twice
            if self._fd < 0:
                self._open_locked()

    def _open_locked(self) -> None:
        writable = True
        try:
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
                mode = os.O_RDWR | os.O_CREAT
            except PermissionError:
                fd, mode, writable = os.open(self.path, os.O_RDONLY), os.O_RDONLY, False
            try:
                mark = os.open(self.mark_path, mode, 0o644)
            except BaseException:
                os.close(fd)
                raise
        except OSError as exc:
            raise SamzaError(f"durable log {self.name}: cannot open {self.path}: {exc}") from exc
        # A handle dropped without close() still releases its files.
        finalizer = weakref.finalize(self, _close_files, fd, mark)
        self._fd, self._mark_fd, self._writable = fd, mark, writable
        if not writable:
            self._finalizer = finalizer
            return
        try:
            with self._locked():
                self._recover()
        except BaseException:
            finalizer()
            self._fd = self._mark_fd = -1
            raise
        self._finalizer = finalizer

    @contextmanager
    def _locked(self) -> Iterator[None]:
        fd = self._fd  # unlock the descriptor that was locked
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def _recover(self) -> None:
        """Under the lock: check what follows the mark, drop a torn tail, make the whole batches after
        the mark durable and visible (a crashed writer's, or a live one's not yet flushed)."""
        upcoming, start = self.flushed()
        size = os.fstat(self._fd).st_size
        if start > size:
            raise SamzaError(
                f"durable log file {self.path} is {size} bytes, but its flush mark says {start} bytes "
                f"(offset {upcoming}) are durable: the file was truncated or replaced"
            )
        end, nxt = start, upcoming
        try:
            for header, _buf, _at in self._walk(start, size, upcoming, check=True):
                end, nxt = header.end, header.upcoming
        except _Bad as bad:
            size = self._drop_torn_tail(bad, size)
        self._end, self._next = end, nxt
        if end != start or size != end:
            _fdatasync(self._fd)
            self._write_mark(nxt, end)

    def _drop_torn_tail(self, bad: _Bad, size: int) -> int:
        """Under the lock: truncate the torn tail ``bad`` found (a crashed writer's: every append writes
        under the lock), with a warning; damage that is not a torn tail is raised. Returns the new size."""
        if not bad.torn:
            raise self._damage(bad) from None
        log.warning(
            "durable log %s: dropped a torn tail of %d bytes at byte %d (offset %d) of %s, left by a "
            "crash (%s); appends continue at offset %d",
            self.name,
            size - bad.position,
            bad.position,
            bad.offset,
            self.path,
            bad.reason,
            bad.offset,
        )
        os.ftruncate(self._fd, bad.position)
        return bad.position

    def _damage(self, bad: _Bad) -> SamzaError:
        return SamzaError(
            f"durable log {self.name} is damaged: file {self.path}, byte {bad.position}, "
            f"offset {bad.offset}: {bad.reason}"
        )

    # -- the flush mark -------------------------------------------------------------------------------
    def flushed(self) -> tuple[int, int]:
        """(offset after the last flushed record, byte where it ends) as the mark says now."""
        self._open()
        for _ in range(100):
            data = os.pread(self._mark_fd, _MARK.size, 0)
            if len(data) < _MARK.size or not any(data):
                return 0, 0
            upcoming, end, crc = _MARK.unpack(data)
            if zlib.crc32(data[:16]) == crc:
                return upcoming, end
        raise SamzaError(f"durable log {self.name}: the flush mark {self.mark_path} is damaged")

    def _write_mark(self, upcoming: int, end: int) -> None:
        data = struct.pack("<QQ", upcoming, end)
        os.pwrite(self._mark_fd, data + struct.pack("<I", zlib.crc32(data)), 0)
        notify_flushed(self.mark_path)

    # -- writing --------------------------------------------------------------------------------------
    def append(
        self,
        values: Sequence[Any],
        keys: Sequence[Any] | None,
        headers: Sequence[bytes] | None,
        timestamp: int,
        what: str,
        timestamps: Sequence[int | None] | None = None,
    ) -> int:
        """Append the records (in batches of up to MAX_BATCH_RECORDS) at append time ``timestamp``, with
        each record's event time from ``timestamps`` (None: no record has one); returns the first one's
        offset. Readers see them after the next :meth:`flush` (of any process)."""
        with self._lock:
            self._open()
            self._require_writable()
            with self._locked():
                self._catch_up()
                first = base = self._next
                parts: list[bytes] = []
                for at in range(0, len(values), MAX_BATCH_RECORDS):
                    stop = at + MAX_BATCH_RECORDS
                    chunk = values[at:stop] if at or stop < len(values) else values
                    parts += encode_batch(
                        base,
                        timestamp,
                        chunk,
                        None if keys is None else keys[at:stop],
                        None if headers is None else headers[at:stop],
                        what,
                        None if timestamps is None else timestamps[at:stop],
                    )
                    base += len(chunk)
                if crash_points.ARMED and crash_points.armed_for("log.append.torn"):
                    data = b"".join(parts)
                    os.write(self._fd, data[: len(data) // 2])
                    crash_points.crash("log.append.torn")
                self._end += _write_all(self._fd, parts)
                self._next = base
                self._dirty = True
            return first

    def _catch_up(self) -> None:
        """Under the lock: learn the batches other processes appended since this one last wrote."""
        size = os.fstat(self._fd).st_size
        if size == self._end:
            return
        if size < self._end:
            raise SamzaError(
                f"durable log file {self.path} shrank from {self._end} to {size} bytes while in use"
            )
        try:
            for header, _buf, _at in self._walk(self._end, size, self._next, check=False):
                self._end, self._next = header.end, header.upcoming
        except _Bad as bad:  # a writer of another process died mid-append
            self._drop_torn_tail(bad, size)

    def flush(self) -> None:
        """Make every appended record durable (fsync) and visible to readers (the mark)."""
        with self._lock:
            if not self._dirty:
                return
            with self._locked():
                self._catch_up()
                if crash_points.ARMED:
                    crash_points.reached("log.append.before-fsync")
                _fdatasync(self._fd)
                if crash_points.ARMED:
                    crash_points.reached("log.append.after-fsync")
                if self.flushed()[1] < self._end:
                    self._write_mark(self._next, self._end)
            self._dirty = False

    def _require_writable(self) -> None:
        if not self._writable:
            raise SamzaError(f"durable log {self.name}: {self.path} is read-only here")

    # -- reading --------------------------------------------------------------------------------------
    def batches(self, start: int) -> Iterator[Batch]:
        """The flushed batches from the one holding offset ``start``, each checked (CRC), in order; the
        flush mark is read once, at the first ``next``."""
        upcoming, end = self.flushed()
        if start >= upcoming:
            return
        with self._lock:
            self._index(end, upcoming)
            bases, positions = self._bases, self._positions
            first = max(bisect.bisect_right(bases, start) - 1, 0)
            pos, base = positions[first], bases[first]
        try:
            for header, buf, at in self._walk(pos, end, base, check=False, whole=True):
                try:
                    yield decode_batch(buf, header, at)
                except BatchDamage as exc:
                    raise _Bad(header.position, header.base, exc.reason, torn=False) from None
        except _Bad as bad:
            raise self._damage(bad) from None

    def _index(self, end: int, upcoming: int) -> None:
        """Extend this process's index of batch positions up to byte ``end`` (a flush mark)."""
        if self._indexed_end >= end:
            return
        try:
            for header, _buf, _at in self._walk(self._indexed_end, end, self._indexed_upcoming, check=False):
                self._bases.append(header.base)
                self._positions.append(header.position)
                self._indexed_end, self._indexed_upcoming = header.end, header.upcoming
        except _Bad as bad:
            raise self._damage(bad) from None
        if self._indexed_upcoming != upcoming:
            raise SamzaError(
                f"durable log {self.name}: the flush mark says offset {upcoming} ends at byte {end} of "
                f"{self.path}, but the batches there end at offset {self._indexed_upcoming}"
            )

    # -- walking the file -----------------------------------------------------------------------------
    def _walk(
        self, start: int, stop: int, base: int, *, check: bool, whole: bool = False
    ) -> Iterator[tuple[BatchHeader, bytes, int]]:
        """The batches between bytes ``start`` and ``stop`` (the first with offset ``base``), each with a
        buffer holding its header (``buf[0]`` is byte ``at``), and its body too with ``whole`` or
        ``check``. With ``check`` each CRC is checked. The first batch that is not whole raises
        :class:`_Bad`, ``torn`` when the rest of the range can only be an unfinished last write."""
        fd, pos, expected = self._fd, start, base
        buf, at = b"", start
        whole = whole or check
        while pos < stop:
            rel = pos - at
            if rel + HEADER_SIZE > len(buf):
                buf, at, rel = os.pread(fd, max(CHUNK, HEADER_SIZE), pos), pos, 0
                if len(buf) < HEADER_SIZE:
                    raise _Bad(pos, expected, f"{len(buf)} bytes where a batch header needs {HEADER_SIZE}")
            try:
                header = read_header(buf, rel, pos)
            except BatchDamage as exc:
                raise _Bad(pos, expected, exc.reason, torn=self._only_zeros(pos, stop)) from None
            if header.end > stop:
                raise _Bad(
                    pos,
                    expected,
                    f"the batch needs {header.end - stop} bytes more than there are",
                    torn=not self._holds_batch(pos + HEADER_SIZE, stop),
                )
            if header.base != expected:
                raise _Bad(pos, expected, f"the batch starts at offset {header.base}", torn=False)
            if whole and header.end - at > len(buf):
                buf, at = os.pread(fd, max(CHUNK, header.end - pos), pos), pos
                if header.end - at > len(buf):
                    raise _Bad(pos, expected, "the batch is cut short")
            if check:
                try:
                    check_crc(buf, header, at)
                except BatchDamage as exc:
                    raise _Bad(pos, expected, exc.reason, torn=header.end == stop) from None
            yield header, buf, at
            pos, expected = header.end, header.upcoming

    def _only_zeros(self, start: int, stop: int) -> bool:
        """True when bytes ``start`` .. ``stop`` are all zero (space a crash allocated but never filled)."""
        while start < stop:
            data = os.pread(self._fd, min(CHUNK, stop - start), start)
            if not data or any(data):
                return not data
            start += len(data)
        return True

    def _holds_batch(self, start: int, stop: int) -> bool:
        """True when a batch header's magic occurs between bytes ``start`` and ``stop``: what precedes it
        is then not the unfinished last write (which would be the file's last bytes)."""
        tail = b""
        while start < stop:
            data = os.pread(self._fd, min(CHUNK, stop - start), start)
            if not data:
                break
            if MAGIC in tail[-3:] + data:
                return True
            tail, start = data, start + len(data)
        return False

    # -- closing --------------------------------------------------------------------------------------
    def close(self) -> None:
        """Flush and close the files (idempotent)."""
        with self._lock:
            if self._fd < 0:
                return
            try:
                self.flush()
            finally:
                self._finalizer()
                self._fd = self._mark_fd = -1


def _close_files(*fds: int) -> None:
    for fd in fds:
        if fd >= 0:
            os.close(fd)


def _write_all(fd: int, parts: list[bytes]) -> int:
    """Write ``parts`` in order with as few ``writev`` calls as the system allows; returns the bytes."""
    total = 0
    for at in range(0, len(parts), _IOV_MAX):
        group = parts[at : at + _IOV_MAX]
        size = sum(map(len, group))
        written = os.writev(fd, group)
        if written < size:  # a short write (rare: signals, huge sizes): write the rest plainly
            view = memoryview(b"".join(group))[written:]
            while view:
                view = view[os.write(fd, view) :]
        total += size
    return total


_IOV_MAX: Final = min(os.sysconf("SC_IOV_MAX") if hasattr(os, "sysconf") else 1024, 1024)


class _Bad(Exception):
    """The batch at byte ``position`` (expected offset ``offset``) is not whole; ``torn`` when that can
    only be the unfinished last write of a crash."""

    def __init__(self, position: int, offset: int, reason: str, *, torn: bool = True) -> None:
        super().__init__(reason)
        self.position = position
        self.offset = offset
        self.reason = reason
        self.torn = torn


__all__ = ["PartitionLog"]
