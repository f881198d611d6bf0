"""Test doubles shared by the chooser tests (a port of Samza's MockMessageChooser)."""

from __future__ import annotations

from collections import deque

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition


class MockMessageChooser:
    """A FIFO chooser that counts starts and stops and remembers registrations."""

    def __init__(self) -> None:
        self.envelopes: deque[IncomingMessageEnvelope] = deque()
        self.starts = 0
        self.stops = 0
        self.registers: dict[SystemStreamPartition, str | None] = {}

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        self.registers[ssp] = offset

    def start(self) -> None:
        self.starts += 1

    def stop(self) -> None:
        self.stops += 1

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        self.envelopes.append(envelope)

    def choose(self) -> IncomingMessageEnvelope | None:
        return self.envelopes.popleft() if self.envelopes else None


def envelope(
    stream: str, partition: int, offset: str | None, message: object, timestamp: int | None = None
) -> IncomingMessageEnvelope:
    """An envelope of ``kafka.<stream>#<partition>`` (offset may be None, as in Samza's tests)."""
    ssp = SystemStreamPartition("kafka", stream, partition)
    return IncomingMessageEnvelope(ssp, offset, None, message, timestamp)  # type: ignore[arg-type]
