"""The MessageCollector a task sends output with, and the container's buffer of the loop thread's output.

Tasks that run on the loop thread (sync tasks without a thread pool) send into an :class:`OutputBuffer`:
a list the run loop hands to the producers once per slice, in one call when all of it goes to one
producer that takes batches (a :class:`~samza_nb.systems.base.BatchProducer`, found once when the buffer is
built). Every other task sends straight to the producers, from whatever thread it runs on.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any, NoReturn

from samza_nb.api.streams import OutgoingMessageEnvelope
from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.base import BatchProducer

if TYPE_CHECKING:
    from samza_nb.systems.base import SystemProducer


_system_of = attrgetter("system_stream.system")


class OutputSendError(SamzaError):
    """Handing a task's buffered output to its producer failed (``task_name`` sent it)."""

    def __init__(self, task_name: str, error: Exception) -> None:
        super().__init__(f"output of task {task_name!r} could not be sent: {error}")
        self.task_name = task_name
        self.error = error


class OutputBuffer:
    """Output sent by tasks on the loop thread, in send order, until :meth:`flush` hands it to the
    producers. Only the loop thread sends into it and flushes it; the run loop flushes it before it
    yields to the event loop, and a commit flushes it before it flushes the producers."""

    __slots__ = ("_batchers", "_producers", "_send_batch", "append", "last_source", "marks", "pending")

    def __init__(self, producers: Mapping[str, SystemProducer]) -> None:
        self._producers = producers
        # The producers that take batches, by system: a buffer all for one of them goes in one call.
        self._batchers: dict[str, Callable[[Sequence[OutgoingMessageEnvelope]], None]] = {
            system: producer.send_batch
            for system, producer in producers.items()
            if isinstance(producer, BatchProducer)
        }
        # One producer that takes batches (the usual in-memory job): the whole buffer in one call.
        self._send_batch: Callable[[Sequence[OutgoingMessageEnvelope]], None] | None = None
        if len(producers) == 1 and len(self._batchers) == 1:
            self._send_batch = next(iter(self._batchers.values()))
        self.pending: list[OutgoingMessageEnvelope] = []
        self.append = self.pending.append
        self.marks: list[tuple[int, str]] = []
        """Where each task's stretch of sends starts: (index in ``pending``, task name). A sender appends
        one, and sets :attr:`last_source`, when it sends after another one did (or first)."""
        self.last_source: str | None = None

    def first_sent(self) -> tuple[str, OutgoingMessageEnvelope] | None:
        """The sender and envelope of the oldest output buffered (None when there is none)."""
        if not self.pending or not self.marks:
            return None
        return self.marks[0][1], self.pending[0]

    def last_sent(self) -> tuple[str, OutgoingMessageEnvelope] | None:
        """The sender and envelope of the newest output buffered (None when there is none)."""
        if not self.pending or self.last_source is None:
            return None
        return self.last_source, self.pending[-1]

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


class TaskCollector:
    """Sends a task's output to the producer of the envelope's system, through the container's
    :class:`OutputBuffer` when given one (a task on the loop thread), else at once from any thread
    (``last_sent`` then holds the last envelope sent, for the observe bus's samples).

    ``send`` is built per collector (a closure, not a method): a task's every output passes through it,
    and a closure keeps the checks to what changes per envelope. The system of an envelope's stream is
    checked once per stream object (envelopes usually share one ``SystemStream``)."""

    __slots__ = ("_outputs", "_producers", "last_sent", "send", "task_name")

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

    def _buffered(self, outputs: OutputBuffer) -> Callable[[OutgoingMessageEnvelope], None]:
        producers, name, append, refuse = self._producers, self.task_name, outputs.append, self._refuse
        pending, mark = outputs.pending, outputs.marks.append
        checked: Any = None  # the last SystemStream found to have a producer

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
