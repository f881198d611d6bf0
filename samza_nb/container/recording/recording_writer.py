"""Writing a recording (``job.record.path``): the header, then the schedule's records, buffered (the format
is :mod:`samza_nb.container.recording.recording`'s)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from samza_nb.container.recording.message_digests import DigestWriter
from samza_nb.container.recording.recording import (
    COMMIT,
    COMPLETE,
    DISPATCH,
    END,
    EOS,
    FLUSH_BYTES,
    HEADER,
    NEXT,
    ROUND,
    RUN,
    SCHEDULE,
    SHIFT,
    STEP,
    TASK_EOS,
    WINDOW,
    Header,
    int_offset,
)
from samza_nb.container.recording.recording import write_varint as _varint

if TYPE_CHECKING:
    from pathlib import Path

    from samza_nb.api.streams import IncomingMessageEnvelope


class ScheduleWriter:
    """Writes a recording: the header at once, then records buffered and appended on :meth:`flush`.

    Keeps what compact records need: each partition's previous offset (for NEXT and offset codes) and each
    task's count of messages started (callbacks are named by how far back from the latest they are). A
    run or round of sync messages is one record, whatever its length."""

    def __init__(self, directory: Path, header: Header) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.digests = DigestWriter(directory)
        """The digests of the input messages (``digests.bin``), written with the schedule's flushes."""
        self.directory = directory
        self._task_of = [p.task for p in header.partitions]
        self._previous: list[int | None] = []
        for p in header.partitions:
            start = int_offset(p.start)
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
        number = int_offset(offset)
        previous = self._previous[ssp]
        if number is not None and previous is not None and number == previous + 1:
            _varint(out, NEXT | ssp << SHIFT)
        else:
            _varint(out, DISPATCH | ssp << SHIFT)
            data = offset.encode()
            _varint(out, len(data))
            out += data
        self._previous[ssp] = number
        self._started[self._task_of[ssp]] += 1
        if len(out) >= FLUSH_BYTES:
            self.flush()

    def run(self, ssp: int, count: int, first: str, last: str) -> None:
        """``count`` messages of partition ``ssp`` start one after another, from ``first`` to ``last``."""
        if count == 1:
            self.dispatch(ssp, first)
            return
        out = self._buffer
        _varint(out, RUN | ssp << SHIFT)
        _varint(out, count)
        self._span(out, ssp, count, first, last)
        self._started[self._task_of[ssp]] += count
        if len(out) >= FLUSH_BYTES:
            self.flush()

    def round(self, ssps: Sequence[int], rows: int, extra: int, ends: Sequence[tuple[str, str]]) -> None:
        """Partitions ``ssps`` take turns: ``rows`` full rows of messages, then one more of each of the
        first ``extra``; ``ends`` holds each partition's first and last offset (unused without messages)."""
        out = self._buffer
        _varint(out, ROUND | len(ssps) << SHIFT)
        _varint(out, rows)
        _varint(out, extra)
        for i, ssp in enumerate(ssps):
            count = rows + 1 if i < extra else rows
            _varint(out, ssp)
            if count:
                self._span(out, ssp, count, *ends[i])
                self._started[self._task_of[ssp]] += count
        if len(out) >= FLUSH_BYTES:
            self.flush()

    def _span(self, out: bytearray, ssp: int, count: int, first: str, last: str) -> None:
        """The offset codes of ``count`` messages of ``ssp`` from ``first`` to ``last``."""
        previous = self._previous[ssp]
        number = _offset_code(out, first, None if previous is None else previous + 1)
        if count > 1:
            number = _offset_code(out, last, None if number is None else number + count - 1)
        self._previous[ssp] = number

    def end_of_stream(self, ssp: int) -> None:
        """Partition ``ssp``'s end-of-stream is taken."""
        _varint(self._buffer, EOS | ssp << SHIFT)

    def complete(self, task: int, seq: int) -> None:
        """Task ``task``'s callback number ``seq`` (0: its first message) completes."""
        out, tag, back = self._buffer, COMPLETE | task << SHIFT, self._started[task] - 1 - seq
        if tag < 0x80 and back < 0x80:  # the common case: two bytes
            out.append(tag)
            out.append(back)
        else:
            _varint(out, tag)
            _varint(out, back)

    def step(self, task: int, seq: int) -> None:
        """Task ``task``'s coroutine of message number ``seq`` runs its next step."""
        out, tag, back = self._buffer, STEP | task << SHIFT, self._started[task] - 1 - seq
        if tag < 0x80 and back < 0x80:  # the common case: two bytes (this runs for every await)
            out.append(tag)
            out.append(back)
        else:
            _varint(out, tag)
            _varint(out, back)

    def window(self, task: int) -> None:
        """Task ``task``'s window runs."""
        _varint(self._buffer, WINDOW | task << SHIFT)

    def task_end_of_stream(self, task: int) -> None:
        """Task ``task``'s end-of-stream operation runs."""
        _varint(self._buffer, TASK_EOS | task << SHIFT)

    def commit_timer(self) -> None:
        """The commit timer fired."""
        _varint(self._buffer, COMMIT)

    def end(self, how: int) -> None:
        """The loop ended (:data:`STOPPED` or :data:`ENDED`)."""
        _varint(self._buffer, END | how << SHIFT)

    def polled(self, ssp: int, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """A batch of partition ``ssp`` was polled: its messages' digests are recorded."""
        self.digests.batch(ssp, envelopes)
        if len(self.digests.buffer) >= FLUSH_BYTES:
            self.digests.flush()

    def flush(self) -> None:
        """Append the buffered records to ``schedule.bin`` and ``digests.bin``."""
        self.digests.flush()
        if self._buffer and not self._file.closed:
            self._file.write(self._buffer)
            self._file.flush()
            self.bytes_written += len(self._buffer)
            self._buffer.clear()

    def close(self) -> None:
        """Flush and close the file."""
        self.flush()
        self._file.close()
        self.digests.close()


def _offset_code(out: bytearray, offset: str, expected: int | None) -> int | None:
    """Append ``offset``'s code (0 when it is ``expected``); returns it as an integer (None: not one)."""
    number = int_offset(offset)
    if number is not None and number == expected:
        out.append(0)
    else:
        data = offset.encode()
        _varint(out, len(data) + 1)
        out += data
    return number


__all__ = ["ScheduleWriter"]
