"""The DefaultChooser: bootstrapping, batching and priority tiers, each layer only when configured."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from samza_nb.chooser.base import Composition, integer_offset_comparator
from samza_nb.chooser.batching import BatchingChooser
from samza_nb.chooser.bootstrapping import BootstrappingChooser
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.settings import read_chooser_settings
from samza_nb.chooser.tiered_priority import TieredPriorityChooser
from samza_nb.chooser.time_aligned import TimeAlignedChooser
from samza_nb.chooser.trace import ChoiceTrace, TracingChooser
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser, OffsetComparator
    from samza_nb.chooser.settings import ChooserSettings


class DefaultChooser(Composition):
    """The chooser a container uses unless ``task.chooser.class`` names another (docs/architecture.md §4).

    Layering, outermost first: ``Bootstrapping(Batching(TieredPriority(tiers, default)))``, where

    - the bootstrapping layer exists when ``bootstrap_metadata`` is non-empty;
    - the batching layer exists when ``batch_size`` is set (not None and not 0);
    - the tiered layer exists when ``priorities`` is non-empty or bootstrapping is on. ``wrapped`` is then
      its default chooser (None: a stream without tier is an error); without tiers ``wrapped`` is the
      innermost chooser (None: a :class:`RoundRobinChooser`). With nothing configured the DefaultChooser
      is ``wrapped`` itself: plain round robin.

    ``update`` and ``choose`` are the outermost layer's own bound methods, so the wrapper adds no cost per
    message. Tracing (``trace=True`` or ``trace_enabled = True``) puts a :class:`TracingChooser` in front
    and records each decision in :attr:`last_choice`; turning it off removes it again.
    """

    __slots__ = ("_batching", "_bootstrapping", "_composed", "_tiered", "_tracer", "choose", "update")

    update: Callable[[IncomingMessageEnvelope], None]
    choose: Callable[[], IncomingMessageEnvelope | None]

    def __init__(
        self,
        wrapped: MessageChooser | None = None,
        batch_size: int | None = None,
        priorities: Mapping[SystemStream, int] | None = None,
        choosers: Mapping[int, MessageChooser] | None = None,
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None = None,
        offset_comparator: OffsetComparator = integer_offset_comparator,
        *,
        trace: bool = False,
    ) -> None:
        use_bootstrapping = bool(bootstrap_metadata)
        self._tiered: TieredPriorityChooser | None = None
        self._batching: BatchingChooser | None = None
        self._bootstrapping: BootstrappingChooser | None = None
        chooser: MessageChooser
        if use_bootstrapping or priorities:
            chooser = self._tiered = TieredPriorityChooser(priorities or {}, choosers or {}, wrapped)
        else:
            chooser = wrapped if wrapped is not None else RoundRobinChooser()
        if batch_size:
            chooser = self._batching = BatchingChooser(chooser, batch_size)
        if bootstrap_metadata:
            chooser = self._bootstrapping = BootstrappingChooser(
                chooser, bootstrap_metadata, offset_comparator
            )
            # Once caught up the bootstrapping layer hands out its wrapped chooser's methods: take them.
            self._bootstrapping.on_caught_up(self._bind)
        self._composed = chooser
        self._tracer: TracingChooser | None = TracingChooser(chooser) if trace else None
        self._bind()

    @classmethod
    def from_config(
        cls,
        config: Mapping[str, str],
        bootstrap_metadata: Mapping[SystemStreamPartition, SSPMetadata] | None = None,
        inputs: Iterable[SystemStream | str] | None = None,
        offset_comparator: OffsetComparator = integer_offset_comparator,
        *,
        inner_factory: Callable[[], MessageChooser] | None = None,
        trace: bool = False,
    ) -> DefaultChooser:
        """Build the chooser the config asks for (see :func:`read_chooser_settings` for the keys).

        Every input stream gets priority 0 when any priority or bootstrap stream is configured; bootstrap
        streams get one more than the highest explicit priority (at least 1); explicit priorities
        override. Each tier, and the default for streams outside the inputs, gets its own chooser from
        ``inner_factory`` (default: :class:`TimeAlignedChooser` when ``task.chooser.time.aligned`` is
        true, else :class:`RoundRobinChooser`). ``bootstrap_metadata`` holds partition metadata of (at
        least) the bootstrap streams; it is required when a bootstrap stream is configured.
        """
        settings = read_chooser_settings(config, inputs)
        factory = inner_factory or (TimeAlignedChooser if settings.time_aligned else RoundRobinChooser)
        tiers = settings.tiers()
        choosers = {priority: factory() for priority in sorted(set(tiers.values()), reverse=True)}
        metadata = _bootstrap_metadata(settings, bootstrap_metadata)
        return cls(
            factory(),
            settings.batch_size or None,
            tiers,
            choosers,
            metadata,
            offset_comparator,
            trace=trace,
        )

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def composed(self) -> MessageChooser:
        """The outermost layer of the composition (what ``update``/``choose`` reach)."""
        return self._composed

    @property
    def tiered(self) -> TieredPriorityChooser | None:
        """The priority layer, if configured."""
        return self._tiered

    @property
    def batching(self) -> BatchingChooser | None:
        """The batching layer, if configured."""
        return self._batching

    @property
    def bootstrapping(self) -> BootstrappingChooser | None:
        """The bootstrapping layer, if configured."""
        return self._bootstrapping

    @property
    def priorities(self) -> dict[SystemStream, int]:
        """The stream → tier mapping in use (empty without a priority layer)."""
        return {} if self._tiered is None else self._tiered.priorities

    # -- tracing ---------------------------------------------------------------------------------------
    @property
    def trace_enabled(self) -> bool:
        """Whether each ``choose()`` records a :class:`ChoiceTrace` in :attr:`last_choice`.

        Set it before the first ``update`` (candidates are complete from then on); setting it later works,
        but candidates offered before are missing until they are chosen.
        """
        return self._tracer is not None

    @trace_enabled.setter
    def trace_enabled(self, enabled: bool) -> None:
        if enabled and self._tracer is None:
            self._tracer = TracingChooser(self._composed)
        elif not enabled:
            self._tracer = None
        self._bind()

    @property
    def last_choice(self) -> ChoiceTrace | None:
        """The trace of the latest ``choose()`` while tracing is on; None otherwise."""
        return None if self._tracer is None else self._tracer.last_choice

    # -- lifecycle -------------------------------------------------------------------------------------
    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Forwarded to the composition."""
        self._composed.register(ssp, offset)

    def start(self) -> None:
        """Forwarded to the composition."""
        self._composed.start()

    def stop(self) -> None:
        """Forwarded to the composition (through the tracer, which forgets its candidates)."""
        (self._tracer or self._composed).stop()

    def _bind(self) -> None:
        front = self._tracer if self._tracer is not None else self._composed
        self.update = front.update
        self.choose = front.choose

    def __repr__(self) -> str:
        return f"DefaultChooser({self._composed!r}, trace={self._tracer is not None})"


def _bootstrap_metadata(
    settings: ChooserSettings, metadata: Mapping[SystemStreamPartition, SSPMetadata] | None
) -> dict[SystemStreamPartition, SSPMetadata] | None:
    """The partition metadata of the bootstrap streams; None when there are none."""
    streams = settings.bootstrap_streams
    if not streams:
        return None
    if metadata is None:
        names = ", ".join(sorted(str(s) for s in streams))
        raise SamzaError(
            f"bootstrap streams {names} are configured, but no partition metadata was given to the "
            "chooser (DefaultChooser.from_config(..., bootstrap_metadata=...))"
        )
    return {ssp: md for ssp, md in metadata.items() if ssp.system_stream in streams}
