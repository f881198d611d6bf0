"""Round robin: envelopes come out in the order they went in."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from samza_nb.chooser.base import UNBOUNDED_RUN

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition


class RoundRobinChooser:
    """FIFO of the envelopes given; ``choose`` on an empty chooser returns None.

    Since the container offers an SSP's next envelope only after its previous one was chosen, FIFO order
    cycles over the partitions that have messages. A :class:`~samza_nb.chooser.base.RunChooser`: when the
    chosen envelope was the only one held, its SSP's next envelopes would follow it without limit;
    otherwise the envelopes held form a round.
    """

    __slots__ = ("_queue", "choose", "update")

    def __init__(self) -> None:
        self._queue: deque[IncomingMessageEnvelope] = deque()
        # Bound methods in slots: the chooser is on the per-message path.
        self.update = self._queue.append
        self.choose = self._choose

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

    def choose_run(self) -> tuple[IncomingMessageEnvelope | None, int]:
        """``choose()``; unbounded room when nothing else is held, else none."""
        queue = self._queue
        if not queue:
            return None, 0
        envelope = queue.popleft()
        return envelope, 0 if queue else UNBOUNDED_RUN

    def end_run(self, taken: int) -> None:
        """Round robin keeps no count."""

    def choose_round(self) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """Everything held, in FIFO order: the partitions cycle in that order (a round), without end."""
        queue = self._queue
        held = list(queue)
        queue.clear()
        return held, UNBOUNDED_RUN

    def __len__(self) -> int:
        return len(self._queue)
