"""One step of a paused job: the record of a message processed on request (:class:`Step`), what was captured
while it ran (the output it sent, the store writes it made: :mod:`samza_nb.container.steering.tap`) and why
the chooser picked it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import OutgoingMessageEnvelope
from samza_nb.chooser.base import TracedChooser
from samza_nb.chooser.round_robin import RoundRobinChooser
from samza_nb.chooser.time_aligned import TimeAlignedChooser
from samza_nb.chooser.trace import ChoiceTrace, chooser_layers, describe_choice
from samza_nb.container.steering.tap import Write

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class NextMessage:
    """The message a paused job processes next (``peek``): its task, partition, offset, key and message,
    and why the chooser picked it (``reason``). The chooser's decision is made when it is peeked and holds:
    the next step or the resume processes this message first."""

    task: str
    ssp: SystemStreamPartition
    offset: str
    key: Any
    message: Any
    reason: str


@dataclass(frozen=True)
class Step(NextMessage):
    """One message a paused job processed on request (``step``): its task, partition, offset, key and
    message, why the chooser picked it (``reason``), the envelopes the task sent while processing it
    (``outputs``) and every store write it made (``writes``: ``(store, key, old, new)``, in order)."""

    outputs: tuple[OutgoingMessageEnvelope, ...] = ()
    writes: tuple[Write, ...] = ()


class Steps(list[Step]):
    """What ``step(n)`` returns: the steps taken, in order. Shorter than ``requested`` when the step ended
    early, and then :attr:`stopped_early` says why ("end of stream", "timeout", "the job stopped")."""

    def __init__(self, requested: int, steps: Iterable[Step] = (), stopped_early: str | None = None) -> None:
        super().__init__(steps)
        self.requested = requested
        self.stopped_early = stopped_early


# -- why the chooser picked an envelope ---------------------------------------------------------------------
def choice_reason(chooser: MessageChooser, envelope: IncomingMessageEnvelope) -> str:
    """Why ``chooser`` just chose ``envelope``, in words: the traced decision when the chooser traces
    (candidates included), else an account read from its layers (policy, tier, batch, bootstrapping)."""
    trace = chooser.last_choice if isinstance(chooser, TracedChooser) else None
    if trace is None or trace.ssp != envelope.ssp or trace.offset != envelope.offset:
        trace = describe_choice(chooser, envelope)
    return reason_text(trace, _policy(chooser))


def reason_text(trace: ChoiceTrace, policy: str) -> str:
    """A decision in words, e.g. ``"round robin; priority tier 1; batch continues (3 of 10)"``."""
    parts = [policy]
    if trace.gated_by_bootstrap:
        lagging = ", ".join(str(stream) for stream in trace.lagging_streams)
        parts.append(f"bootstrapping ({lagging} not caught up)" if lagging else "bootstrapping")
    if trace.tier is not None:
        parts.append(f"priority tier {trace.tier}")
    if trace.batch_size is not None:
        position = trace.batch_position or 1
        if position > 1:
            parts.append(f"batch continues ({position} of {trace.batch_size})")
        else:
            parts.append(f"starts a batch (up to {trace.batch_size})")
    if trace.candidates:
        others = [f"{ssp} (tier {tier})" if tier is not None else str(ssp) for ssp, tier in trace.candidates]
        parts.append(f"candidates: {', '.join(others)}")
    return "; ".join(parts)


def _policy(chooser: MessageChooser) -> str:
    """The innermost policy of a composition, in words."""
    node = chooser_layers(chooser).policy
    if isinstance(node, RoundRobinChooser):
        return "round robin (next in turn)"
    if isinstance(node, TimeAlignedChooser):
        return "time-aligned (earliest event time)"
    return f"chosen by {type(node).__name__}" if node is not None else "chosen by priority"
