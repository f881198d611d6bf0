"""Tiered priority: envelopes of higher-priority streams always go before lower-priority ones."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser


class TieredPriorityChooser:
    """Groups streams into priority tiers (a higher number goes first); each tier has its own chooser.

    Promises (docs/architecture.md §4):

    - ``update`` hands the envelope to the chooser of its stream's tier, or to ``default`` when the stream
      has no tier; with neither it raises :class:`SamzaError` naming the SSP.
    - ``choose`` asks the tier choosers from the highest priority down, then ``default``, and returns the
      first envelope one of them gives; None when none does. Within a tier the tier's chooser decides.
    - ``register``, ``start`` and ``stop`` reach the default chooser and every tier chooser.

    Construction fails with :class:`SamzaError` when a priority has no chooser in ``choosers``.
    ``update`` and ``choose`` are per-message; they are instance attributes (bound methods).
    """

    __slots__ = (
        "_by_stream",
        "_choosers",
        "_chooses",
        "_default",
        "_order",
        "_priorities",
        "_update_of",
        "choose",
        "update",
    )

    update: Callable[[IncomingMessageEnvelope], None]
    choose: Callable[[], IncomingMessageEnvelope | None]

    def __init__(
        self,
        priorities: Mapping[SystemStream, int],
        choosers: Mapping[int, MessageChooser],
        default: MessageChooser | None = None,
    ) -> None:
        self._priorities: dict[SystemStream, int] = dict(priorities)
        self._choosers: dict[int, MessageChooser] = dict(choosers)
        for priority in sorted(set(self._priorities.values())):
            if priority not in self._choosers:
                raise SamzaError(f"missing message chooser for priority {priority}")
        self._default = default
        # Keyed by (system, stream): building and hashing that tuple is cheaper than hashing a
        # SystemStream/SystemStreamPartition dataclass on every message.
        self._by_stream: dict[tuple[str, str], tuple[int, MessageChooser]] = {
            (ss.system, ss.stream): (priority, self._choosers[priority])
            for ss, priority in self._priorities.items()
        }
        order = [self._choosers[p] for p in sorted(self._choosers, reverse=True)]
        if default is not None:
            order.append(default)
        self._order: tuple[MessageChooser, ...] = tuple(order)
        # Per-message lookups: the chooser of each SSP seen so far, and the tiers' choose methods.
        self._update_of: dict[SystemStreamPartition, Callable[[IncomingMessageEnvelope], None]] = {}
        self._chooses = tuple(chooser.choose for chooser in order)
        self.update = self._update
        self.choose = self._choose

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def priorities(self) -> dict[SystemStream, int]:
        """The stream → tier mapping (a copy)."""
        return dict(self._priorities)

    @property
    def default(self) -> MessageChooser | None:
        """The chooser of streams without a tier, if any."""
        return self._default

    def tier_of(self, ssp: SystemStreamPartition) -> int | None:
        """The tier of ``ssp``'s stream; None when it has none (it goes to the default chooser)."""
        entry = self._by_stream.get((ssp.system, ssp.stream))
        return None if entry is None else entry[0]

    def set_priority(
        self, stream: SystemStream, priority: int, new_chooser: Callable[[], MessageChooser]
    ) -> None:
        """Put ``stream`` in tier ``priority`` live (between two choices); a tier new to this chooser gets
        ``new_chooser()`` (started here). Envelopes offered from now on go to the new tier; the one envelope
        per partition already held stays in its old tier until it is chosen."""
        chooser = self._choosers.get(priority)
        if chooser is None:
            chooser = self._choosers[priority] = new_chooser()
            chooser.start()
        self._priorities[stream] = priority
        self._by_stream[(stream.system, stream.stream)] = (priority, chooser)
        self._update_of.clear()
        order = [self._choosers[p] for p in sorted(self._choosers, reverse=True)]
        if self._default is not None:
            order.append(self._default)
        self._order = tuple(order)
        self._chooses = tuple(c.choose for c in order)

    # -- lifecycle -------------------------------------------------------------------------------------
    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Register ``ssp`` with the default chooser and with every tier chooser."""
        if self._default is not None:
            self._default.register(ssp, offset)
        for chooser in self._choosers.values():
            chooser.register(ssp, offset)

    def start(self) -> None:
        """Start the default chooser, then every tier chooser."""
        if self._default is not None:
            self._default.start()
        for chooser in self._choosers.values():
            chooser.start()

    def stop(self) -> None:
        """Stop the default chooser, then every tier chooser."""
        if self._default is not None:
            self._default.stop()
        for chooser in self._choosers.values():
            chooser.stop()

    # -- per message -----------------------------------------------------------------------------------
    def _update(self, envelope: IncomingMessageEnvelope) -> None:
        update = self._update_of.get(envelope.ssp)
        if update is None:
            update = self._update_of[envelope.ssp] = self._update_for(envelope)
        update(envelope)

    def _update_for(self, envelope: IncomingMessageEnvelope) -> Callable[[IncomingMessageEnvelope], None]:
        ssp = envelope.ssp
        entry = self._by_stream.get((ssp.system, ssp.stream))
        if entry is not None:
            return entry[1].update
        if self._default is not None:
            return self._default.update
        else:
            raise SamzaError(
                f"no priority tier and no default chooser for {ssp}: cannot prioritize its envelope "
                f"(offset {envelope.offset!r})"
            )

    def _choose(self) -> IncomingMessageEnvelope | None:
        for choose in self._chooses:
            envelope = choose()
            if envelope is not None:
                return envelope
        return None

    def __repr__(self) -> str:
        tiers = ", ".join(f"{ss}={p}" for ss, p in sorted(self._priorities.items(), key=lambda i: -i[1]))
        return f"TieredPriorityChooser({tiers}; default={self._default!r})"
