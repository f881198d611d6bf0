"""The MessageCollector a task sends output with: routes each envelope to its system's producer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb.api.streams import OutgoingMessageEnvelope
from samza_nb.errors import SystemProducerError

if TYPE_CHECKING:
    from samza_nb.systems.base import SystemProducer


class TaskCollector:
    """Sends a task's output to the producer of the envelope's system; safe from any thread."""

    __slots__ = ("_producers", "task_name")

    def __init__(self, task_name: str, producers: Mapping[str, SystemProducer]) -> None:
        self.task_name = task_name
        self._producers = producers

    def send(self, envelope: OutgoingMessageEnvelope) -> None:
        """Hand ``envelope`` to its system's producer; an unknown system is a SystemProducerError."""
        try:
            producer = self._producers[envelope.system_stream.system]
        except (KeyError, AttributeError):
            if not isinstance(envelope, OutgoingMessageEnvelope):
                raise SystemProducerError(
                    f"task {self.task_name!r} sent {envelope!r}: expected an OutgoingMessageEnvelope"
                ) from None
            known = ", ".join(sorted(self._producers)) or "none"
            raise SystemProducerError(
                f"task {self.task_name!r} sent to {envelope.system_stream}: no system "
                f"{envelope.system_stream.system!r} is configured (systems: {known}); "
                f"set systems.{envelope.system_stream.system}.samza.factory"
            ) from None
        producer.send(self.task_name, envelope)
