"""Round robin: envelopes come out in the order they went in."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition


class RoundRobinChooser:
    """FIFO of the envelopes given; ``choose`` on an empty chooser returns None.

    Since the container offers an SSP's next envelope only after its previous one was chosen, FIFO order
    cycles over the partitions that have messages.
    """

    __slots__ = ("_queue", "choose", "take", "update")

    def __init__(self) -> None:
        self._queue: deque[IncomingMessageEnvelope] = deque()
        # Bound methods in slots: the chooser is on the per-message path.
        self.update = self._queue.append
        self.choose = self._choose
        # Fast path for the container: like choose, but raises IndexError instead of returning None.
        self.take = self._queue.popleft

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Round robin needs nothing per SSP."""

    def start(self) -> None:
        """Nothing to prepare."""

    def stop(self) -> None:
        """Drop anything still held."""
        self._queue.clear()

    def _choose(self) -> IncomingMessageEnvelope | None:
        queue = self._queue
        return queue.popleft() if queue else None

    def __len__(self) -> int:
        return len(self._queue)
