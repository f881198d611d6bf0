"""The files of a recorded schedule (``job.record.path``, ``samza-nb run --record DIR``).

A recording is a directory of two files:

- ``header.json``: the format and its version, the job (name, id), the task table, the partition table
  (each partition's task, its starting offset and the checkpointed offset before it: the starting
  checkpoint) and the config keys the schedule depends on.
- ``schedule.bin``: the schedule, in order, as varint-coded records. A record starts with a tag
  ``kind | id << 3`` (``id``: a partition's or task's index in the tables); most are that one byte:

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
  ====== ============ ================================================================================

Records are appended when the recording is flushed (at every commit, at stop, and when the buffer grows);
every record's length follows from its bytes, so a file cut short by a crash reads as its complete
records (a readable prefix).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import SamzaError

FORMAT = "samza-nb schedule"
VERSION = 1
HEADER = "header.json"
SCHEDULE = "schedule.bin"

NEXT, DISPATCH, EOS, COMPLETE, STEP, WINDOW, COMMIT, END = range(8)
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


@dataclass(frozen=True)
class PartitionEntry:
    """One row of the partition table: the partition, its task's index, where the recorded run started it
    (``start``) and the checkpointed offset before that (``last``, None without one)."""

    ssp: SystemStreamPartition
    task: int
    start: str
    last: str | None


@dataclass(frozen=True)
class Header:
    """What ``header.json`` holds."""

    job: tuple[str, str]
    tasks: tuple[str, ...]
    partitions: tuple[PartitionEntry, ...]
    config: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``header.json``."""
        return {
            "format": FORMAT,
            "version": VERSION,
            "job": {"name": self.job[0], "id": self.job[1]},
            "tasks": list(self.tasks),
            "partitions": [
                {
                    "system": p.ssp.system,
                    "stream": p.ssp.stream,
                    "partition": p.ssp.partition,
                    "task": p.task,
                    "start": p.start,
                    "last": p.last,
                }
                for p in self.partitions
            ],
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, data: Any, where: Path) -> Header:
        """Read a ``header.json`` object; a SamzaError naming the file when it is not one."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise SamzaError(f"{where} is not the header of a samza-nb schedule recording")
        if data.get("version") != VERSION:
            raise SamzaError(
                f"{where}: recording format version {data.get('version')!r}; this reads {VERSION}"
            )
        try:
            return cls(
                (str(data["job"]["name"]), str(data["job"]["id"])),
                tuple(str(t) for t in data["tasks"]),
                tuple(
                    PartitionEntry(
                        SystemStreamPartition(p["system"], p["stream"], int(p["partition"])),
                        int(p["task"]),
                        str(p["start"]),
                        None if p["last"] is None else str(p["last"]),
                    )
                    for p in data["partitions"]
                ),
                {str(k): str(v) for k, v in data["config"].items()},
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SamzaError(f"{where}: malformed recording header ({exc!r})") from exc


def _varint(out: bytearray, value: int) -> None:
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _int_offset(offset: str) -> int | None:
    """``offset`` as an integer when it is one in canonical form, else None."""
    if offset.isdigit() and (offset == "0" or offset[0] != "0"):
        return int(offset)
    return None


class ScheduleWriter:
    """Writes a recording: the header at once, then records buffered and appended on :meth:`flush`.

    Keeps what compact records need: each partition's previous offset (for NEXT) and each task's count of
    messages started (callbacks are named by how far back from the latest they are)."""

    def __init__(self, directory: Path, header: Header) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._task_of = [p.task for p in header.partitions]
        self._previous: list[int | None] = []
        for p in header.partitions:
            start = _int_offset(p.start)
            self._previous.append(None if start is None else start - 1)
        self._started = [0] * len(header.tasks)
        self._buffer = bytearray()
        self.bytes_written = 0
        temporary = directory / (HEADER + ".tmp")
        temporary.write_text(json.dumps(header.to_json(), indent=1))
        os.replace(temporary, directory / HEADER)
        self._file = open(directory / SCHEDULE, "wb")  # noqa: SIM115 (closed by close())

    def dispatch(self, ssp: int, offset: str) -> None:
        """A message of partition ``ssp`` at ``offset`` starts."""
        out = self._buffer
        number = _int_offset(offset)
        previous = self._previous[ssp]
        if number is not None and previous is not None and number == previous + 1:
            _varint(out, NEXT | ssp << 3)
        else:
            _varint(out, DISPATCH | ssp << 3)
            data = offset.encode()
            _varint(out, len(data))
            out += data
        self._previous[ssp] = number
        self._started[self._task_of[ssp]] += 1
        if len(out) >= FLUSH_BYTES:
            self.flush()

    def end_of_stream(self, ssp: int) -> None:
        """Partition ``ssp``'s end-of-stream is taken."""
        _varint(self._buffer, EOS | ssp << 3)

    def complete(self, task: int, seq: int) -> None:
        """Task ``task``'s callback number ``seq`` (0: its first message) completes."""
        _varint(self._buffer, COMPLETE | task << 3)
        _varint(self._buffer, self._started[task] - 1 - seq)

    def step(self, task: int, seq: int) -> None:
        """Task ``task``'s coroutine of message number ``seq`` runs its next step."""
        _varint(self._buffer, STEP | task << 3)
        _varint(self._buffer, self._started[task] - 1 - seq)

    def window(self, task: int) -> None:
        """Task ``task``'s window runs."""
        _varint(self._buffer, WINDOW | task << 3)

    def commit_timer(self) -> None:
        """The commit timer fired."""
        _varint(self._buffer, COMMIT)

    def end(self, how: int) -> None:
        """The loop ended (:data:`STOPPED` or :data:`ENDED`)."""
        _varint(self._buffer, END | how << 3)

    def flush(self) -> None:
        """Append the buffered records to ``schedule.bin``."""
        if self._buffer and not self._file.closed:
            self._file.write(self._buffer)
            self._file.flush()
            self.bytes_written += len(self._buffer)
            self._buffer.clear()

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        self._file.close()


@dataclass(frozen=True)
class Entry:
    """One decoded record: ``kind`` and, by kind, the partition index (NEXT/DISPATCH as DISPATCH, EOS),
    the task index (WINDOW; COMPLETE and STEP with the callback number) or ``value`` (END: how)."""

    kind: int
    ssp: int = -1
    offset: str = ""
    task: int = -1
    seq: int = -1
    value: int = -1


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

    def entries(self) -> Iterator[Entry]:
        """The records in order, NEXT made a DISPATCH with its offset; a record cut short at the end of
        the file (a crash while writing) ends the iteration."""
        data = self._data
        partitions = self.header.partitions
        previous: list[int | None] = []
        for p in partitions:
            start = _int_offset(p.start)
            previous.append(None if start is None else start - 1)
        started = [0] * len(self.header.tasks)
        position = 0
        size = len(data)

        def varint() -> int:
            nonlocal position
            value = shift = 0
            while True:
                if position >= size:
                    raise EOFError
                byte = data[position]
                position += 1
                value |= (byte & 0x7F) << shift
                if byte < 0x80:
                    return value
                shift += 7

        while position < size:
            try:
                tag = varint()
                kind, index = tag & 7, tag >> 3
                if kind in (NEXT, DISPATCH):
                    if index >= len(partitions):
                        raise SamzaError(
                            f"{self.directory / SCHEDULE}: partition {index} is not in the header"
                        )
                    if kind == NEXT:
                        number = previous[index]
                        if number is None:
                            raise SamzaError(f"{self.directory / SCHEDULE}: NEXT of a non-integer offset")
                        number += 1
                        offset = str(number)
                    else:
                        length = varint()
                        if position + length > size:
                            raise EOFError
                        offset = data[position : position + length].decode()
                        position += length
                        number = _int_offset(offset)
                    previous[index] = number
                    started[partitions[index].task] += 1
                    yield Entry(DISPATCH, ssp=index, offset=offset)
                elif kind == EOS:
                    yield Entry(EOS, ssp=index)
                elif kind in (COMPLETE, STEP, WINDOW):
                    if index >= len(started):
                        raise SamzaError(f"{self.directory / SCHEDULE}: task {index} is not in the header")
                    if kind == WINDOW:
                        yield Entry(WINDOW, task=index)
                        continue
                    back = varint()
                    yield Entry(kind, task=index, seq=started[index] - 1 - back)
                elif kind in (COMMIT, END):
                    yield Entry(kind, value=index)
            except EOFError:
                return

    @property
    def size(self) -> int:
        """Bytes of ``schedule.bin``."""
        return len(self._data)


__all__ = ["Entry", "Header", "PartitionEntry", "Recording", "ScheduleWriter"]
