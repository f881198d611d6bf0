"""Decision traces: what a chooser composition decided, and why, for the observe bus."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.chooser.base import Composition
from samza_nb.chooser.batching import BatchingChooser
from samza_nb.chooser.bootstrapping import BootstrappingChooser
from samza_nb.chooser.tiered_priority import TieredPriorityChooser

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStream, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser


@dataclass(frozen=True, slots=True)
class ChoiceTrace:
    """One ``choose()`` decision.

    - ``ssp``/``offset``/``tier``: the chosen envelope's partition, offset and priority tier (all None
      when nothing was chosen; ``tier`` is None too when the composition has no tiers or the stream
      went to the default chooser).
    - ``candidates``: every envelope the chooser held just before the decision, as ``(ssp, tier)`` pairs
      in the order they were offered.
    - ``gated_by_bootstrap``: bootstrapping was in force — some bootstrap partition still lagged, so the
      choice was only allowed (or withheld) under the bootstrap rule. ``lagging_streams`` names them.
    - ``held_by_batching``: the chosen envelope is the one the batching layer held back for its
      preferred partition (a batch continued rather than the inner choosers deciding).
    - ``batch_position``/``batch_size``: with a batching layer, which envelope of its partition's batch
      the chosen one is (1 starts a batch) and the batch size (``task.consumer.batch.size``); None
      without one.
    """

    ssp: SystemStreamPartition | None
    offset: str | None
    tier: int | None
    candidates: tuple[tuple[SystemStreamPartition, int | None], ...]
    gated_by_bootstrap: bool
    held_by_batching: bool
    lagging_streams: tuple[SystemStream, ...] = ()
    batch_position: int | None = None
    batch_size: int | None = None

    @property
    def withheld(self) -> bool:
        """True when envelopes were held but none was chosen (bootstrapping waits for a lagging stream)."""
        return self.ssp is None and bool(self.candidates)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly form for events: SSPs and streams as their string names."""
        return {
            "ssp": None if self.ssp is None else str(self.ssp),
            "offset": self.offset,
            "tier": self.tier,
            "candidates": [[str(ssp), tier] for ssp, tier in self.candidates],
            "gated_by_bootstrap": self.gated_by_bootstrap,
            "held_by_batching": self.held_by_batching,
            "lagging_streams": [str(stream) for stream in self.lagging_streams],
            "batch_position": self.batch_position,
            "batch_size": self.batch_size,
        }


_IDLE = ChoiceTrace(None, None, None, (), False, False)
_IDLE_LAST: tuple[Any, ...] = (None, None, (), (), None, None)


def _no_tier(ssp: SystemStreamPartition) -> int | None:
    return None


class TracingChooser:
    """Wraps any chooser and describes each ``choose()`` as a :class:`ChoiceTrace` (``last_choice``).

    It finds the bootstrapping, batching and tiered-priority layers of the composition it wraps (through
    ``composed`` of a DefaultChooser and ``wrapped`` of the bootstrapping and batching layers) and reads
    their state around the decision; any other chooser is traced with candidates and choice only.

    Candidates are the envelopes offered through this wrapper and not chosen yet: wrap the chooser before
    the first ``update``, or candidates are incomplete until every envelope held earlier was chosen.
    Per ``choose`` the wrapper only snapshots the candidates (O(candidates), at C speed); the
    :class:`ChoiceTrace` itself is built when ``last_choice`` is read. Leave tracing off (do not wrap)
    when nobody observes.
    """

    __slots__ = ("_batching", "_bootstrapping", "_held", "_last", "_tier_of", "_trace", "_wrapped")

    def __init__(self, wrapped: MessageChooser) -> None:
        self._wrapped = wrapped
        # Candidate SSP -> its tier, in the order offered.
        self._held: dict[SystemStreamPartition, int | None] = {}
        self._bootstrapping: BootstrappingChooser | None = None
        self._batching: BatchingChooser | None = None
        self._tier_of: Callable[[SystemStreamPartition], int | None] = _no_tier
        layers = chooser_layers(wrapped)
        self._bootstrapping = layers.bootstrapping
        self._batching = layers.batching
        if layers.tiered is not None:
            self._tier_of = layers.tiered.tier_of
        # The latest decision, raw: (chosen envelope or None, its tier, candidates, lagging streams,
        # envelope batching held before the choice, its position in its batch).
        self._last: tuple[Any, ...] | None = None
        self._trace: ChoiceTrace | None = None
        if self._bootstrapping is not None:
            # Once no partition lags, bootstrapping cannot gate any more: stop asking it.
            self._bootstrapping.on_caught_up(self._forget_bootstrapping)

    @property
    def wrapped(self) -> MessageChooser:
        """The traced chooser."""
        return self._wrapped

    @property
    def last_choice(self) -> ChoiceTrace | None:
        """The trace of the latest ``choose()``; None before the first."""
        trace = self._trace
        if trace is None and self._last is not None:
            envelope, tier, candidates, lagging, batch_held, position = self._last
            if envelope is None:
                trace = ChoiceTrace(None, None, None, candidates, bool(lagging), False, lagging)
            else:
                batching = self._batching
                trace = ChoiceTrace(
                    envelope.ssp,
                    envelope.offset,
                    tier,
                    candidates,
                    bool(lagging),
                    batch_held is not None and envelope is batch_held,
                    lagging,
                    position,
                    batching.batch_size if batching is not None else None,
                )
            self._trace = trace
        return trace

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Forwarded."""
        self._wrapped.register(ssp, offset)

    def start(self) -> None:
        """Forwarded."""
        self._wrapped.start()

    def stop(self) -> None:
        """Forwarded; forgets the candidates."""
        self._held.clear()
        self._wrapped.stop()

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Remember the envelope as a candidate, then forward it."""
        ssp = envelope.ssp
        self._held[ssp] = self._tier_of(ssp)
        self._wrapped.update(envelope)

    def choose(self) -> IncomingMessageEnvelope | None:
        """Forward, and keep what is needed to describe the decision."""
        held = self._held
        bootstrapping = self._bootstrapping
        lagging = bootstrapping.lagging_streams if bootstrapping is not None else ()
        batching = self._batching
        batch_held = batching.held_envelope if batching is not None else None
        candidates = tuple(held.items()) if held else ()
        envelope = self._wrapped.choose()
        self._trace = None
        if envelope is None:
            if candidates or lagging:
                self._last = (None, None, candidates, lagging, None, None)
            else:
                self._last, self._trace = _IDLE_LAST, _IDLE
            return None
        ssp = envelope.ssp
        tier = held.pop(ssp) if ssp in held else self._tier_of(ssp)
        position = _batch_position(batching, envelope) if batching is not None else None
        self._last = (envelope, tier, candidates, lagging, batch_held, position)
        return envelope

    def _forget_bootstrapping(self) -> None:
        self._bootstrapping = None

    def __repr__(self) -> str:
        return f"TracingChooser({self._wrapped!r})"


@dataclass(frozen=True, slots=True)
class ChooserLayers:
    """The layers of a chooser composition: the bootstrapping, batching and priority layers above its
    policy (None where it has none), and the policy, the innermost chooser (None: a priority tier without
    a default chooser)."""

    bootstrapping: BootstrappingChooser | None
    batching: BatchingChooser | None
    tiered: TieredPriorityChooser | None
    policy: MessageChooser | None


def chooser_layers(chooser: MessageChooser) -> ChooserLayers:
    """Walk ``chooser`` from the outside in (through tracing, the default chooser's composition,
    bootstrapping, batching, and a priority layer's default chooser) and name its layers; the layers
    below a priority layer are not its own, only the policy is looked for there."""
    bootstrapping: BootstrappingChooser | None = None
    batching: BatchingChooser | None = None
    tiered: TieredPriorityChooser | None = None
    node: MessageChooser | None = chooser
    while True:
        if isinstance(node, TracingChooser):
            node = node.wrapped
        elif isinstance(node, Composition):
            node = node.composed
        elif isinstance(node, BootstrappingChooser):
            if tiered is None:
                bootstrapping = node
            node = node.wrapped
        elif isinstance(node, BatchingChooser):
            if tiered is None:
                batching = node
            node = node.wrapped
        elif isinstance(node, TieredPriorityChooser):
            if tiered is None:
                tiered = node
            node = node.default
        else:
            return ChooserLayers(bootstrapping, batching, tiered, node)


def describe_choice(chooser: MessageChooser, envelope: IncomingMessageEnvelope) -> ChoiceTrace:
    """A cheap account of a choice that was just made, read from the composition's layer state (no
    tracing needed): the envelope's tier, whether bootstrapping is in force, whether it continues a batch.
    Candidates are not known without tracing and are left empty. For sampled decisions on the observe bus.
    """
    layers = chooser_layers(chooser)
    bootstrapping, batching = layers.bootstrapping, layers.batching
    tier_of = layers.tiered.tier_of if layers.tiered is not None else _no_tier
    lagging = bootstrapping.lagging_streams if bootstrapping is not None else ()
    position = _batch_position(batching, envelope) if batching is not None else None
    return ChoiceTrace(
        envelope.ssp,
        envelope.offset,
        tier_of(envelope.ssp),
        (),
        bool(lagging),
        position is not None and position > 1,
        lagging,
        position,
        batching.batch_size if batching is not None else None,
    )


def _batch_position(batching: BatchingChooser, envelope: IncomingMessageEnvelope) -> int:
    """The position in its batch of the envelope ``batching`` just returned: its count while the batch
    runs, the batch size when that envelope completed the batch (the layer reset), else 1."""
    if batching.preferred_ssp is envelope.ssp:
        return max(batching.batch_count, 1)
    return batching.batch_size if batching.batch_size > 1 and batching.batch_count == 0 else 1
