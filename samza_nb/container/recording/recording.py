"""The files of a recorded schedule (``job.record.path``, ``samza-nb run --record DIR``).

A recording is a directory of three files:

- ``header.json``: the format and its version, the job (name, id), the task table, the partition table
  (each partition's task, its starting offset and the checkpointed offset before it: the starting
  checkpoint) and the config keys the schedule depends on.
- ``digests.bin`` (version 3 on): a digest of each input message the run polled, by partition and offset
  (:mod:`samza_nb.container.recording.message_digests`): a replay stops at the first message that differs.
- ``schedule.bin``: the schedule, in order, as varint-coded records. A record starts with a tag
  ``kind | id << 4`` (``id``: a partition's or task's index in the tables, or a round's width); most are
  that one byte:

  ====== ============ ================================================================================
  kind   name         payload and meaning
  ====== ============ ================================================================================
  0      NEXT         a message of partition ``id`` starts: the one after its previous (integer offsets)
  1      DISPATCH     a message of partition ``id`` starts: offset given (varint length, UTF-8 bytes)
  2      EOS          partition ``id``'s end-of-stream is taken
  3      COMPLETE     a callback of task ``id`` completes: varint ``back`` (0: the task's latest message)
  4      STEP         an ``async def process`` of task ``id`` resumes (its first run too): varint ``back``
  5      WINDOW       task ``id``'s window runs
  6      COMMIT       the commit timer fires (``id`` 0)
  7      END          the loop ends: ``id`` 0 a stop was requested, 1 the job ended by itself
  8      RUN          varint ``n`` (2 or more) messages of partition ``id`` start one after another (a
                      sync task's run): the first offset, then the last (*offset codes*)
  9      ROUND        ``id`` partitions take turns (a round robin of sync tasks): varint ``rows``, varint
                      ``extra``, then per partition its index and, when it has messages in the round, the
                      first offset and, with two or more, the last (*offset codes*); the messages start
                      row by row, ``rows`` full rows, then the first ``extra`` partitions once more
  10     TASK_EOS     task ``id``'s end-of-stream operation runs (all its partitions ended; then it is
                      done): a replay holds it until here
  ====== ============ ================================================================================

An *offset code* is a varint: 0 for the expected offset (a first one: the one after the partition's
previous; a last one: the first plus the messages between, integer offsets), else the offset's length
plus one, then its UTF-8 bytes. So a run of any length takes about four bytes; the messages between its
first and last are the partition's next ones (read back with their offsets when both ends were expected).

Records are appended when the recording is flushed (at every commit, at stop, and when the buffer grows);
every record's length follows from its bytes, so a file cut short by a crash reads as its complete
records (a readable prefix). Version 1 (3-bit kinds, no RUN, ROUND or TASK_EOS) and version 2 (the same
schedule as version 3, no ``digests.bin``: its messages are not checked) are read too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from samza_nb.container.recording.header import FORMAT, READS, VERSION, Header, PartitionEntry
from samza_nb.errors import SamzaError

HEADER = "header.json"
SCHEDULE = "schedule.bin"

NEXT, DISPATCH, EOS, COMPLETE, STEP, WINDOW, COMMIT, END, RUN, ROUND, TASK_EOS = range(11)
SHIFT = 4
"""A tag is ``kind | id << SHIFT`` (version 1: 3)."""
STOPPED, ENDED = 0, 1

FLUSH_BYTES = 1 << 16
"""The buffer is written out once it holds this much (besides at commit and stop)."""

SCHEDULE_KEYS = (
    "task.max.concurrency",
    "job.container.thread.pool.size",
    "task.async.commit",
    "task.window.ms",
    "task.commit.ms",
)
"""The config keys a schedule depends on: a replay runs with the recorded values."""


def write_varint(out: bytearray, value: int) -> None:
    """Append ``value`` (>= 0) as a varint: 7 bits a byte, low first, the high bit set on all but the last."""
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def read_varint(data: bytes, position: int) -> tuple[int, int]:
    """The varint at ``position`` of ``data`` and the position after it; EOFError when it is cut short."""
    value = shift = 0
    while True:
        if position >= len(data):
            raise EOFError
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def int_offset(offset: str) -> int | None:
    """``offset`` as an integer when it is one in canonical form, else None."""
    if offset.isdigit() and (offset == "0" or offset[0] != "0"):
        return int(offset)
    return None


def offset_in(first: str, last: str, count: int, index: int) -> str:
    """The offset of message ``index`` of ``count`` messages of a partition from ``first`` to ``last``
    ("": not recorded; those between the ends are known when the offsets are consecutive integers)."""
    if index == 0:
        return first
    if index == count - 1:
        return last
    number = int_offset(first)
    return "" if number is None or int_offset(last) != number + count - 1 else str(number + index)


@dataclass(frozen=True)
class Column:
    """One partition of a ROUND read as one entry: its index, how many messages it has in the round
    (``count``), and their first and last offsets."""

    ssp: int
    count: int
    first: str
    last: str


@dataclass(frozen=True)
class Entry:
    """One decoded record: ``kind`` and, by kind, the partition index (NEXT, DISPATCH, each message of a
    RUN or ROUND: all as DISPATCH, with the offset, or "" for a message inside a run whose offset was
    not recorded: the partition's next one; EOS), the task index (WINDOW, TASK_EOS; COMPLETE and STEP
    with the callback number) or ``value`` (END: how; a RUN read as one entry: its messages, from
    ``offset`` to ``last``; a ROUND read as one entry: its messages, ``rows`` full rows of its
    ``columns`` then the first ``extra`` once more)."""

    kind: int
    ssp: int = -1
    offset: str = ""
    task: int = -1
    seq: int = -1
    value: int = -1
    last: str = ""
    rows: int = 0
    extra: int = 0
    columns: tuple[Column, ...] = ()

    def offset_at(self, index: int) -> str:
        """The offset of message ``index`` of this record ("": not recorded; inside a RUN or ROUND, known
        when its partition's offsets are consecutive integers)."""
        if self.kind == ROUND:
            column = self.columns[index % len(self.columns)]
            return offset_in(column.first, column.last, column.count, index // len(self.columns))
        if self.kind != RUN:
            return self.offset
        return offset_in(self.offset, self.last, self.value, index)

    def ssp_at(self, index: int) -> int:
        """The partition of message ``index`` of this record (of a ROUND: its column's)."""
        if self.kind == ROUND:
            return self.columns[index % len(self.columns)].ssp
        return self.ssp


class Recording:
    """A recording read back: its :attr:`header` and its records (:meth:`entries`)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        header_path = self.directory / HEADER
        try:
            self.header = Header.from_json(json.loads(header_path.read_text()), header_path)
            self._data = (self.directory / SCHEDULE).read_bytes()
        except FileNotFoundError as exc:
            raise SamzaError(f"{self.directory} holds no schedule recording (no {exc.filename})") from None
        except json.JSONDecodeError as exc:
            raise SamzaError(f"{header_path} is not JSON: {exc}") from None

    def entries(self, runs: bool = False) -> Iterator[Entry]:
        """The records in order, one entry per message (NEXT, RUN and ROUND made DISPATCHes; with
        ``runs``, a RUN stays one entry: its first offset, ``value`` messages, its last offset ``last``,
        and so does a ROUND: ``value`` messages, its ``rows``, ``extra`` and ``columns``); a
        record cut short at the end of the file (a crash while writing) ends the iteration."""
        return _Decoder(self, runs).entries()

    def records(self) -> int:
        """How many whole records ``schedule.bin`` holds (a run or a round is one)."""
        decoder = _Decoder(self)
        count = 0
        while decoder.position < len(self._data):
            try:
                decoder.record()
            except EOFError:
                break
            count += 1
        return count

    @property
    def size(self) -> int:
        """Bytes of ``schedule.bin``."""
        return len(self._data)


class ByteReader:
    """Reads varints and UTF-8 text from ``data`` at ``position`` (EOFError where it is cut short)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.position = 0

    def varint(self) -> int:
        """The next varint."""
        value, self.position = read_varint(self.data, self.position)
        return value

    def text(self, length: int) -> str:
        """The next ``length`` bytes, as UTF-8 text."""
        end = self.position + length
        if end > len(self.data):
            raise EOFError
        value = self.data[self.position : end].decode()
        self.position = end
        return value


class _Decoder(ByteReader):
    """Reads ``schedule.bin`` record by record, keeping what the compact records are relative to."""

    def __init__(self, recording: Recording, runs: bool = False) -> None:
        super().__init__(recording._data)
        self.runs = runs
        header = recording.header
        self.where = recording.directory / SCHEDULE
        self.shift = 3 if header.version == 1 else SHIFT
        self.task_of = [p.task for p in header.partitions]
        self.previous: list[int | None] = []
        for p in header.partitions:
            start = int_offset(p.start)
            self.previous.append(None if start is None else start - 1)
        self.started = [0] * len(header.tasks)

    def entries(self) -> Iterator[Entry]:
        data_size = len(self.data)
        while self.position < data_size:
            try:
                record = self.record()
            except EOFError:
                return
            yield from record

    def partition(self, index: int) -> int:
        if index >= len(self.previous):
            raise SamzaError(f"{self.where}: partition {index} is not in the header")
        return index

    def task(self, index: int) -> int:
        if index >= len(self.started):
            raise SamzaError(f"{self.where}: task {index} is not in the header")
        return index

    def record(self) -> list[Entry]:
        """The entries of the next record (all of it read first: a record cut short yields nothing)."""
        tag = self.varint()
        kind, index = tag & ((1 << self.shift) - 1), tag >> self.shift
        if kind == NEXT:
            number = self.previous[self.partition(index)]
            if number is None:
                raise SamzaError(f"{self.where}: NEXT of a non-integer offset")
            return self.messages(index, 1, str(number + 1), number + 1, "", None)
        if kind == DISPATCH:
            self.partition(index)
            offset = self.text(self.varint())
            return self.messages(index, 1, offset, int_offset(offset), "", None)
        if kind == RUN:
            count = self.varint()
            span = self.span(self.partition(index), count)
            if self.runs and count > 1:
                self.started[self.task_of[index]] += count
                self.previous[index] = span[3]
                return [Entry(RUN, ssp=index, offset=span[0], value=count, last=span[2])]
            return self.messages(index, count, *span)
        if kind == ROUND:
            return self.round(index)
        if kind == EOS:
            return [Entry(EOS, ssp=self.partition(index))]
        if kind in (WINDOW, TASK_EOS):
            return [Entry(kind, task=self.task(index))]
        if kind in (COMPLETE, STEP):
            back = self.varint()
            return [Entry(kind, task=self.task(index), seq=self.started[index] - 1 - back)]
        if kind in (COMMIT, END):
            return [Entry(kind, value=index)]
        raise SamzaError(f"{self.where}: unknown record kind {kind} at byte {self.position}")

    def offset(self, expected: int | None) -> tuple[str, int | None]:
        """An offset code read: the offset and its integer (None: not one)."""
        code = self.varint()
        if code == 0:
            if expected is None:
                raise SamzaError(f"{self.where}: an expected offset after a non-integer one")
            return str(expected), expected
        offset = self.text(code - 1)
        return offset, int_offset(offset)

    def span(self, ssp: int, count: int) -> tuple[str, int | None, str, int | None]:
        """The first and last offset (and integers) of ``count`` messages of ``ssp``."""
        previous = self.previous[ssp]
        first, number = self.offset(None if previous is None else previous + 1)
        if count < 2:
            return first, number, first, number
        last, last_number = self.offset(None if number is None else number + count - 1)
        return first, number, last, last_number

    def messages(
        self, ssp: int, count: int, first: str, number: int | None, last: str, last_number: int | None
    ) -> list[Entry]:
        """The DISPATCH entries of ``count`` messages of ``ssp`` from ``first`` to ``last``: those between
        with their offsets when the ends are consecutive integers, else ""."""
        entries = [Entry(DISPATCH, ssp=ssp, offset=first)]
        if count > 1:
            if number is not None and last_number == number + count - 1:
                entries += (Entry(DISPATCH, ssp=ssp, offset=str(number + i)) for i in range(1, count))
            else:
                entries += [Entry(DISPATCH, ssp=ssp)] * (count - 2)
                entries.append(Entry(DISPATCH, ssp=ssp, offset=last))
        self.previous[ssp] = last_number if count > 1 else number
        self.started[self.task_of[ssp]] += count
        return entries

    def round(self, width: int) -> list[Entry]:
        """A ROUND's entries, row by row (with ``runs``: one entry)."""
        rows, extra = self.varint(), self.varint()
        columns: list[list[Entry]] = []
        ssps, spans = [], []
        for i in range(width):
            ssp = self.partition(self.varint())
            count = rows + 1 if i < extra else rows
            ssps.append(ssp)
            spans.append((ssp, count, *self.span(ssp, count)) if count else None)
        if self.runs and width:
            return [self.whole_round(rows, extra, ssps, spans)]
        for item in spans:  # every code read: now the record is whole
            columns.append([] if item is None else self.messages(*item))
        entries = [column[row] for row in range(rows) for column in columns]
        entries += (columns[i][rows] for i in range(extra))
        return entries

    def whole_round(
        self,
        rows: int,
        extra: int,
        ssps: list[int],
        spans: list[tuple[int, int, str, int | None, str, int | None] | None],
    ) -> Entry:
        """A ROUND as one entry (its partitions and their spans read: count and ends, or None)."""
        columns = []
        for ssp, item in zip(ssps, spans, strict=True):
            if item is None:  # no message in the round (it stopped in its first row)
                columns.append(Column(ssp, 0, "", ""))
                continue
            _, count, first, number, last, last_number = item
            self.previous[ssp] = last_number if count > 1 else number
            self.started[self.task_of[ssp]] += count
            columns.append(Column(ssp, count, first, last if count > 1 else first))
        total = rows * len(spans) + extra
        return Entry(ROUND, ssp=columns[0].ssp, value=total, rows=rows, extra=extra, columns=tuple(columns))


__all__ = [
    "FORMAT",
    "READS",
    "VERSION",
    "ByteReader",
    "Column",
    "Entry",
    "Header",
    "PartitionEntry",
    "Recording",
    "int_offset",
    "offset_in",
    "read_varint",
    "write_varint",
]
