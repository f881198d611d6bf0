"""Bootstrapping: hold back every choice until each lagging bootstrap stream has an envelope waiting."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from samza_nb.chooser.base import integer_offset_comparator

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser, OffsetComparator


class BootstrappingChooser:
    """Wraps a chooser so that bootstrap streams are read to their head before anything else is decided.

    ``bootstrap_metadata`` holds the partitions of the bootstrap streams with their offsets at container
    start. Promises (docs/architecture.md §4, Samza's BootstrappingChooser):

    - The lagging SSPs are the bootstrap partitions that are not caught up. At ``start``: partitions in the
      metadata that were never registered are dropped; a partition whose registered offset is at or after
      its ``upcoming`` offset is caught up; an empty partition (``newest`` None) is caught up. When an SSP is
      registered several times, its lowest offset counts.
    - ``choose`` returns None unless every lagging *stream* has an envelope from one of its lagging
      partitions waiting in the wrapped chooser; otherwise the wrapped chooser decides.
    - After an envelope of a lagging SSP is chosen whose offset is at or after ``newest`` (or which is
      end-of-stream), that SSP is caught up, for good; messages written after the container started do
      not count.
    - With no lagging SSP left, the chooser is a pass-through: ``update``/``choose`` become the wrapped
      chooser's own bound methods, taken at that moment, and the callbacks given to :meth:`on_caught_up`
      run once.

    Offsets are compared with ``offset_comparator``; offsets it cannot compare (it raises ValueError or
    TypeError) are treated as "not reached".
    """

    __slots__ = (
        "_compare",
        "_lag_counts",
        "_lagging",
        "_listeners",
        "_metadata",
        "_registered",
        "_started",
        "_waiting",
        "_wrapped",
        "choose",
        "update",
    )

    update: Callable[[IncomingMessageEnvelope], None]
    choose: Callable[[], IncomingMessageEnvelope | None]

    def __init__(
        self,
        wrapped: MessageChooser,
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata],
        offset_comparator: OffsetComparator = integer_offset_comparator,
    ) -> None:
        self._wrapped = wrapped
        self._metadata: dict[SystemStreamPartition, SSPMetadata] = dict(bootstrap_metadata)
        self._compare = offset_comparator
        self._registered: dict[SystemStreamPartition, str | None] = {}
        self._lagging: set[SystemStreamPartition] = set(self._metadata)
        self._lag_counts: dict[SystemStream, int] = _count_by_stream(self._lagging)
        # Envelopes of lagging partitions handed to the wrapped chooser and not yet chosen, per stream.
        self._waiting: dict[SystemStream, int] = {}
        self._listeners: list[Callable[[], None]] = []
        self._started = False
        self.update = self._update_gated
        self.choose = self._choose_gated

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def wrapped(self) -> MessageChooser:
        """The chooser that decides once bootstrapping allows a choice."""
        return self._wrapped

    @property
    def lagging_ssps(self) -> frozenset[SystemStreamPartition]:
        """The bootstrap partitions not caught up yet."""
        return frozenset(self._lagging)

    @property
    def lag_counts(self) -> dict[SystemStream, int]:
        """Per bootstrap stream still lagging, how many of its partitions lag (a copy)."""
        return dict(self._lag_counts)

    @property
    def lagging_streams(self) -> tuple[SystemStream, ...]:
        """The bootstrap streams with at least one lagging partition."""
        return tuple(self._lag_counts)

    @property
    def is_bootstrapping(self) -> bool:
        """True while some bootstrap partition lags: choices are gated."""
        return bool(self._lagging)

    def on_caught_up(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` once when no partition lags any more (at once if that is already so after
        ``start``). Used to drop per-message indirections and to announce the end of bootstrapping."""
        if self._started and not self._lagging:
            callback()
        else:
            self._listeners.append(callback)

    # -- lifecycle -------------------------------------------------------------------------------------
    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Forward to the wrapped chooser and remember the lowest offset ``ssp`` was registered with."""
        self._wrapped.register(ssp, offset)
        registered = self._registered
        if ssp not in registered:
            registered[ssp] = offset
        elif offset is not None:
            existing = registered[ssp]
            # An SSP shared by several tasks (bootstrap + broadcast) starts at its lowest offset (SAMZA-1100).
            if existing is not None and self._safe_compare(existing, offset) > 0:
                registered[ssp] = offset

    def start(self) -> None:
        """Work out the lagging partitions, then start the wrapped chooser."""
        lagging: set[SystemStreamPartition] = set()
        for ssp in self._lagging:
            if ssp not in self._registered:
                continue
            metadata = self._metadata[ssp]
            if metadata.newest is None:
                continue
            if self._reached(self._registered[ssp], metadata.upcoming):
                continue
            lagging.add(ssp)
        self._lagging = lagging
        self._lag_counts = _count_by_stream(lagging)
        self._waiting = {}
        self._started = True
        self._wrapped.start()
        if not lagging:
            self._pass_through()

    def stop(self) -> None:
        """Forwarded to the wrapped chooser."""
        self._wrapped.stop()

    # -- per message -----------------------------------------------------------------------------------
    def _update_gated(self, envelope: IncomingMessageEnvelope) -> None:
        self._wrapped.update(envelope)
        ssp = envelope.ssp
        if ssp in self._lagging:
            stream = ssp.system_stream
            waiting = self._waiting
            waiting[stream] = waiting.get(stream, 0) + 1

    def _choose_gated(self) -> IncomingMessageEnvelope | None:
        lagging = self._lagging
        if not lagging:
            return self._wrapped.choose()
        waiting = self._waiting
        for stream in self._lag_counts:
            if not waiting.get(stream):
                return None
        envelope = self._wrapped.choose()
        if envelope is not None:
            ssp = envelope.ssp
            if ssp in lagging:
                waiting[ssp.system_stream] -= 1
                if envelope.is_end_of_stream or self._reached(envelope.offset, self._metadata[ssp].newest):
                    self._mark_caught_up(ssp)
        return envelope

    # -- helpers ---------------------------------------------------------------------------------------
    def _mark_caught_up(self, ssp: SystemStreamPartition) -> None:
        self._lagging.discard(ssp)
        stream = ssp.system_stream
        remaining = self._lag_counts[stream] - 1
        if remaining:
            self._lag_counts[stream] = remaining
        else:
            del self._lag_counts[stream]
            self._waiting.pop(stream, None)
        if not self._lagging:
            self._pass_through()

    def _pass_through(self) -> None:
        self.update = self._wrapped.update
        self.choose = self._wrapped.choose
        listeners, self._listeners = self._listeners, []
        for callback in listeners:
            callback()

    def _safe_compare(self, a: str, b: str) -> int:
        try:
            return self._compare(a, b)
        except (ValueError, TypeError):
            return 0

    def _reached(self, offset: str | None, target: str | None) -> bool:
        if offset is None or target is None:
            return False
        try:
            return self._compare(offset, target) >= 0
        except (ValueError, TypeError):
            return False

    def __repr__(self) -> str:
        lagging = ", ".join(sorted(str(ssp) for ssp in self._lagging))
        return f"BootstrappingChooser({self._wrapped!r}, lagging=[{lagging}])"


def _count_by_stream(ssps: set[SystemStreamPartition]) -> dict[SystemStream, int]:
    counts: dict[SystemStream, int] = {}
    for ssp in ssps:
        stream = ssp.system_stream
        counts[stream] = counts.get(stream, 0) + 1
    return counts
