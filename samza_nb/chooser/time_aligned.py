"""Time-aligned: the held envelope with the smallest event timestamp goes first."""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import TYPE_CHECKING

from samza_nb.chooser.base import NO_ROUND

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition

TimestampOf = Callable[["IncomingMessageEnvelope"], "int | None"]
"""Extracts an envelope's event time (ms), or None when it has none."""


class TimeAlignedChooser:
    """Keeps the inputs aligned in event time (docs/architecture.md §4, beyond Samza).

    Promises:

    - ``choose`` returns the held envelope with the smallest event timestamp; equal timestamps go in the
      order their envelopes arrived (so equal-time partitions take turns, like round robin).
    - An envelope without timestamp is ranked as if it carried the timestamp of the most recently chosen
      timestamped envelope (minus infinity before the first): it is processed "now" in event time, after
      held envelopes that are older and before newer ones, and in arrival order among equals. So envelopes
      without timestamps are never starved by timestamped ones (nor the reverse), and when no envelope has
      a timestamp the chooser is exactly round robin (FIFO).
    - ``update`` and ``choose`` cost O(log n) for n held envelopes (a binary heap).

    The event time is ``envelope.timestamp`` unless ``timestamp_of`` is given (e.g. to read it from the
    message). ``update`` and ``choose`` are per-message; they are instance attributes (bound methods).
    """

    __slots__ = ("_heap", "_now", "_seq", "_timestamp_of", "choose", "update")

    update: Callable[[IncomingMessageEnvelope], None]
    choose: Callable[[], IncomingMessageEnvelope | None]

    def __init__(self, timestamp_of: TimestampOf | None = None) -> None:
        # Entries: (sort time, arrival number, had a timestamp, envelope); the arrival number is unique,
        # so envelopes themselves are never compared.
        self._heap: list[tuple[float, int, bool, IncomingMessageEnvelope]] = []
        self._seq = 0
        self._now: float = float("-inf")
        self._timestamp_of: TimestampOf = timestamp_of or _envelope_timestamp
        self.update = self._update if timestamp_of is None else self._update_extracted
        self.choose = self._choose

    @property
    def now(self) -> float:
        """The timestamp of the most recently chosen timestamped envelope (-inf before the first)."""
        return self._now

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Time alignment needs nothing per SSP."""

    def start(self) -> None:
        """Nothing to prepare."""

    def stop(self) -> None:
        """Drop anything still held."""
        self._heap.clear()

    def _update(self, envelope: IncomingMessageEnvelope) -> None:
        self._seq = seq = self._seq + 1
        timestamp = envelope.timestamp
        if timestamp is None:
            heappush(self._heap, (self._now, seq, False, envelope))
        else:
            heappush(self._heap, (timestamp, seq, True, envelope))

    def _update_extracted(self, envelope: IncomingMessageEnvelope) -> None:
        self._seq = seq = self._seq + 1
        timestamp = self._timestamp_of(envelope)
        if timestamp is None:
            heappush(self._heap, (self._now, seq, False, envelope))
        else:
            heappush(self._heap, (timestamp, seq, True, envelope))

    def _choose(self) -> IncomingMessageEnvelope | None:
        heap = self._heap
        if not heap:
            return None
        when, _, timestamped, envelope = heappop(heap)
        if timestamped:
            self._now = when
        return envelope

    def choose_run(self) -> tuple[IncomingMessageEnvelope | None, int]:
        """``choose()`` with no room: every envelope must pass through ``choose``, because each chosen
        timestamp moves :attr:`now`, which ranks the envelopes without timestamp offered later."""
        return self._choose(), 0

    def end_run(self, taken: int) -> None:
        """Nothing to account for (runs are empty)."""

    def choose_round(self) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """No rounds: the order follows the timestamps."""
        return NO_ROUND

    def __len__(self) -> int:
        return len(self._heap)

    def __repr__(self) -> str:
        return f"TimeAlignedChooser(held={len(self._heap)}, now={self._now})"


def _envelope_timestamp(envelope: IncomingMessageEnvelope) -> int | None:
    return envelope.timestamp
