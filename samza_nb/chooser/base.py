"""The MessageChooser protocol: decides which partition's message the container processes next."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition

OffsetComparator = Callable[[str, str], int]
"""Compares two offsets of one partition: negative, zero or positive like ``cmp``."""


def integer_offset_comparator(a: str, b: str) -> int:
    """Compare offsets as integers ("2" < "10"), the rule of the in-memory and Kafka systems."""
    x, y = int(a), int(b)
    return (x > y) - (x < y)


@runtime_checkable
class MessageChooser(Protocol):
    """Holds at most one envelope per SSP (given by ``update``) and picks the next one (``choose``).

    Lifecycle: ``register`` for every input SSP with its starting offset, then ``start``, then any number
    of ``update``/``choose``, then ``stop``. ``update`` is called for an SSP only when the chooser holds
    no envelope of it.
    """

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Announce an input SSP and the offset its first message will have (None if unknown)."""
        ...

    def start(self) -> None:
        """Called once after every SSP was registered, before the first update."""
        ...

    def stop(self) -> None:
        """Called once when the container stops."""
        ...

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Offer the next envelope of its SSP."""
        ...

    def choose(self) -> IncomingMessageEnvelope | None:
        """Return (and forget) the envelope to process next, or None to process nothing now."""
        ...
