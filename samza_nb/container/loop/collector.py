"""The MessageCollector a task sends output with, and the container's buffer of the loop thread's output.

Tasks that run on the loop thread (sync tasks without a thread pool) send into an :class:`OutputBuffer`:
a list the run loop hands to the producers once per slice (every 1,024 messages while tasks send: see
``MessagePump.FLUSH_EVERY``), in one call when all of it goes to one
producer that takes batches (a :class:`~samza_nb.systems.base.BatchProducer`, found once when the buffer is
built). Every other task sends straight to the producers, from whatever thread it runs on.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NoReturn

from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream
from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.base import BatchProducer, ValueBatchProducer

if TYPE_CHECKING:
    from samza_nb.systems.base import SystemProducer


_system_of = attrgetter("system_stream.system")
_NOTHING = object()  # what a collector has checked before its first send (None is a stream it refuses)


class OutputSendError(SamzaError):
    """Handing a task's buffered output to its producer failed (``task_name`` sent it)."""

    def __init__(self, task_name: str, error: Exception) -> None:
        super().__init__(f"output of task {task_name!r} could not be sent: {error}")
        self.task_name = task_name
        self.error = error


class SendRun:
    """Messages sent one after another with ``collector.send_to(stream, message)`` (no key) to one
    stream, kept as a list of values (and their senders) instead of an envelope each: one entry of an
    :class:`OutputBuffer`."""

    __slots__ = ("messages", "sources", "stream")

    def __init__(self, stream: SystemStream) -> None:
        self.stream = stream
        self.messages: list[Any] = []
        self.sources: list[str] = []  # the task that sent each message

    def envelope(self, index: int) -> OutgoingMessageEnvelope:
        """The envelope ``send`` would have sent for message ``index``."""
        return OutgoingMessageEnvelope(self.stream, self.messages[index])


Entry = OutgoingMessageEnvelope | SendRun
"""What an :class:`OutputBuffer` holds: an envelope, or a run of values sent with ``send_to``."""


class OutputBuffer:
    """Output sent by tasks on the loop thread, in send order, until :meth:`flush` hands it to the
    producers. Only the loop thread sends into it and flushes it; the run loop flushes it before it
    yields to the event loop, and a commit flushes it before it flushes the producers."""

    __slots__ = (
        "_batchers",
        "_producers",
        "_send_batch",
        "_value_senders",
        "append",
        "last_source",
        "marks",
        "pending",
        "run",
    )

    def __init__(self, producers: Mapping[str, SystemProducer]) -> None:
        self._producers = producers
        # The producers that take batches, by system: a buffer all for one of them goes in one call.
        self._batchers: dict[str, Callable[[Sequence[OutgoingMessageEnvelope]], None]] = {
            system: producer.send_batch
            for system, producer in producers.items()
            if isinstance(producer, BatchProducer)
        }
        # The producers that take plain values (send_to's runs), by system.
        self._value_senders: dict[str, Callable[[SystemStream, Sequence[Any]], None]] = {
            system: producer.send_values
            for system, producer in producers.items()
            if isinstance(producer, ValueBatchProducer)
        }
        # One producer that takes batches (the usual in-memory job): the whole buffer in one call.
        self._send_batch: Callable[[Sequence[OutgoingMessageEnvelope]], None] | None = None
        if len(producers) == 1 and len(self._batchers) == 1:
            self._send_batch = next(iter(self._batchers.values()))
        self.pending: list[Entry] = []
        self.append = self.pending.append
        self.marks: list[tuple[int, str]] = []
        """Where each task's stretch of sends starts: (index in ``pending``, task name). A sender appends
        one, and sets :attr:`last_source`, when it sends after another one did (or first)."""
        self.last_source: str | None = None
        self.run: SendRun | None = None
        """The run ``send_to`` appended last (it takes more values while it is the last entry)."""

    def first_sent(self) -> tuple[str, OutgoingMessageEnvelope] | None:
        """The sender and envelope of the oldest output buffered (None when there is none)."""
        if not self.pending:
            return None
        entry = self.pending[0]
        if isinstance(entry, SendRun):
            return entry.sources[0], entry.envelope(0)
        return (self.marks[0][1], entry) if self.marks else None

    def last_sent(self) -> tuple[str, OutgoingMessageEnvelope] | None:
        """The sender and envelope of the newest output buffered (None when there is none)."""
        if not self.pending:
            return None
        entry = self.pending[-1]
        if isinstance(entry, SendRun):
            return entry.sources[-1], entry.envelope(-1)
        return (self.last_source, entry) if self.last_source is not None else None

    def flush(self) -> None:
        """Hand everything buffered to the producers, in send order; an :class:`OutputSendError` naming
        the task when a producer refuses a message (what came before it was sent)."""
        pending = self.pending
        if not pending:
            return
        batch = pending[:]
        marks = self.marks[:]
        pending.clear()
        self.marks.clear()
        self.last_source = None
        if self.run is not None:
            self.run = None
            self._flush_entries(batch, marks)
            return
        self._flush_envelopes(batch, marks)  # type: ignore[arg-type]  # (no run: all envelopes)

    def _flush_envelopes(self, batch: list[OutgoingMessageEnvelope], marks: list[tuple[int, str]]) -> None:
        """Hand ``batch`` (envelopes only; ``marks`` say who sent them) to the producers."""
        send_batch = self._send_batch
        if send_batch is None and self._batchers:
            systems = set(map(_system_of, batch))  # at C speed
            if len(systems) == 1:
                send_batch = self._batchers.get(systems.pop())
        if send_batch is not None:
            try:
                send_batch(batch)
                return
            except Exception:
                pass  # nothing was sent: one by one below sends what precedes the culprit and names it
        ends = [start for start, _ in marks[1:]] + [len(batch)]
        producers = self._producers
        for (start, source), end in zip(marks, ends, strict=True):
            for envelope in batch[start:end]:
                try:
                    producers[envelope.system_stream.system].send(source, envelope)
                except Exception as exc:
                    raise OutputSendError(source, exc) from exc

    def _flush_entries(self, batch: list[Entry], marks: list[tuple[int, str]]) -> None:
        """Hand ``batch`` (envelopes and runs of ``send_to``) to the producers in order: a run in one
        ``send_values`` call where its producer takes values, else as envelopes; each stretch of
        envelopes as :meth:`_flush_envelopes` does."""
        starts = [start for start, _ in marks]
        stretch: list[OutgoingMessageEnvelope] = []
        stretch_marks: list[tuple[int, str]] = []
        for index, entry in enumerate(batch):
            if isinstance(entry, SendRun):
                if stretch:
                    self._flush_envelopes(stretch, stretch_marks)
                    stretch, stretch_marks = [], []
                self._flush_run(entry)
                continue
            at = bisect_right(starts, index) - 1  # the mark of the task that sent this envelope
            assert at >= 0, "an envelope sent before any mark"
            source = marks[at][1]
            if not stretch_marks or stretch_marks[-1][1] != source:
                stretch_marks.append((len(stretch), source))
            stretch.append(entry)
        if stretch:
            self._flush_envelopes(stretch, stretch_marks)

    def _flush_run(self, run: SendRun) -> None:
        """Hand the values of ``run`` to its producer: in one call when it takes values, else as
        envelopes (named by sender when it refuses one)."""
        send_values = self._value_senders.get(run.stream.system)
        if send_values is not None:
            try:
                send_values(run.stream, run.messages)
                return
            except Exception:
                pass  # nothing was sent: one by one below sends what precedes the culprit and names it
            producer = self._producers[run.stream.system]
            for message, source in zip(run.messages, run.sources, strict=True):
                try:
                    producer.send(source, OutgoingMessageEnvelope(run.stream, message))
                except Exception as exc:
                    raise OutputSendError(source, exc) from exc
            return
        envelopes = [OutgoingMessageEnvelope(run.stream, message) for message in run.messages]
        marks: list[tuple[int, str]] = []
        for index, source in enumerate(run.sources):
            if not marks or marks[-1][1] != source:
                marks.append((index, source))
        self._flush_envelopes(envelopes, marks)


class TaskCollector:
    """Sends a task's output to the producer of the envelope's system, through the container's
    :class:`OutputBuffer` when given one (a task on the loop thread), else at once from any thread
    (``last_sent`` then holds the last envelope sent, for the observe bus's samples).

    ``send`` and ``send_to`` are built per collector (closures, not methods): a task's every output
    passes through them, and a closure keeps the checks to what changes per message. The system of a
    stream is checked once per stream object (a task's messages usually share one ``SystemStream``)."""

    __slots__ = ("_outputs", "_producers", "last_sent", "send", "send_to", "task_name")

    def __init__(
        self, task_name: str, producers: Mapping[str, SystemProducer], outputs: OutputBuffer | None = None
    ) -> None:
        self.task_name = task_name
        self._producers = producers
        self._outputs = outputs
        self.last_sent: OutgoingMessageEnvelope | None = None
        self.send: Callable[[OutgoingMessageEnvelope], None] = (
            self._direct() if outputs is None else self._buffered(outputs)
        )
        """Send an envelope to its system's producer; an unknown system is a SystemProducerError."""
        self.send_to: Callable[..., None] = (
            self._direct_to(self.send) if outputs is None else self._buffered_to(outputs)
        )
        """``send_to(stream, message, key=None)``: the same as ``send(OutgoingMessageEnvelope(stream,
        message, key=key))``; on the loop thread, messages without a key go out with no envelope built."""

    def _buffered(self, outputs: OutputBuffer) -> Callable[[OutgoingMessageEnvelope], None]:
        producers, name, append, refuse = self._producers, self.task_name, outputs.append, self._refuse
        pending, mark = outputs.pending, outputs.marks.append
        checked: Any = _NOTHING  # the last SystemStream found to have a producer

        def send(envelope: OutgoingMessageEnvelope) -> None:
            nonlocal checked
            try:
                stream = envelope.system_stream
            except AttributeError:
                refuse(envelope)
            if stream is not checked:
                if not isinstance(envelope, OutgoingMessageEnvelope) or stream.system not in producers:
                    refuse(envelope)
                checked = stream
            if outputs.last_source is not name:  # (a mark; tasks of a round alternate)
                mark((len(pending), name))
                outputs.last_source = name
            append(envelope)

        return send

    def _buffered_to(self, outputs: OutputBuffer) -> Callable[..., None]:
        producers, name, send, append = self._producers, self.task_name, self.send, outputs.append
        pending, refuse = outputs.pending, self._refuse_stream
        checked: Any = _NOTHING  # the last SystemStream found to have a producer

        def send_to(stream: SystemStream, message: Any, key: Any = None) -> None:
            nonlocal checked
            run = outputs.run
            if run is not None and run.stream is stream and key is None and pending[-1] is run:
                run.messages.append(message)
                run.sources.append(name)
                return
            if stream is not checked:
                if not isinstance(stream, SystemStream) or stream.system not in producers:
                    refuse(stream)
                checked = stream
            if key is not None:
                send(OutgoingMessageEnvelope(stream, message, key=key))
                return
            run = outputs.run = SendRun(stream)
            append(run)
            run.messages.append(message)
            run.sources.append(name)

        return send_to

    def _direct_to(self, send: Callable[[OutgoingMessageEnvelope], None]) -> Callable[..., None]:
        refuse = self._refuse_stream

        def send_to(stream: SystemStream, message: Any, key: Any = None) -> None:
            if not isinstance(stream, SystemStream):
                refuse(stream)
            send(OutgoingMessageEnvelope(stream, message, key=key))

        return send_to

    def _direct(self) -> Callable[[OutgoingMessageEnvelope], None]:
        producers, name, refuse = self._producers, self.task_name, self._refuse

        def send(envelope: OutgoingMessageEnvelope) -> None:
            try:
                producer = producers.get(envelope.system_stream.system)
            except AttributeError:
                producer = None
            if producer is None or not isinstance(envelope, OutgoingMessageEnvelope):
                refuse(envelope)
            producer.send(name, envelope)
            self.last_sent = envelope

        return send

    def _refuse_stream(self, stream: Any) -> NoReturn:
        if not isinstance(stream, SystemStream):
            raise SystemProducerError(
                f"task {self.task_name!r} sent to {stream!r}: expected a SystemStream "
                "(SystemStream(system, stream), or SystemStream.parse('system.stream'))"
            )
        self._refuse(OutgoingMessageEnvelope(stream, None))

    def _refuse(self, envelope: OutgoingMessageEnvelope) -> NoReturn:
        if not isinstance(envelope, OutgoingMessageEnvelope):
            raise SystemProducerError(
                f"task {self.task_name!r} sent {envelope!r}: expected an OutgoingMessageEnvelope"
            )
        known = ", ".join(sorted(self._producers)) or "none"
        raise SystemProducerError(
            f"task {self.task_name!r} sent to {envelope.system_stream}: no system "
            f"{envelope.system_stream.system!r} is configured (systems: {known}); "
            f"set systems.{envelope.system_stream.system}.samza.factory"
        )
