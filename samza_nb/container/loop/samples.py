"""Samples for sampled observers of the observe bus (a notebook's dashboard): one chooser decision per
pump, and the messages taken and sent around it.

:class:`PumpSampler` is what the message pump is given: while anyone samples (``bus.sampled``) each pump
samples one decision, its first and its last in turn (so an observer sees more than the partition pumps
start with; of a round the next position in turn), with the message it took
(:class:`~samza_nb.observe.events.MessageTaken`, while ``bus.messages``); :func:`sample_sent` the
messages tasks sent (:class:`~samza_nb.observe.events.MessageSent`): the first or the last envelope in
the loop thread's output buffer, and the last one each task sent straight to its producer (a task on a
thread or an ``async`` task: its collector keeps a reference to it). Never per message; nothing at all
while nobody samples.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.chooser.trace import describe_choice
from samza_nb.container.loop.collector import TaskCollector
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.container.loop.loop_state import LoopState


class SamplePhase(enum.Enum):
    """Where a sampling pump is: which of its decisions a sampled observer hears about, and whether it
    has."""

    FIRST_DUE = "first due"  # this pump samples its first decision, which has not come yet
    FIRST_SAMPLED = "first sampled"  # this pump sampled its first decision
    LAST_DUE = "last due"  # this pump samples its last decision, when it ends


class PumpSampler:
    """Samples a pump's chooser decisions and messages for sampled observers. The pump calls
    :meth:`begin` once per pump and, only when it returned the sampler, :meth:`chose` / :meth:`round`
    for its decisions and :meth:`end`; the phase changes in those methods only."""

    def __init__(self, state: LoopState) -> None:
        self._state = state
        self._next = SamplePhase.FIRST_DUE  # the phase the next sampling pump starts in
        self.phase = SamplePhase.FIRST_DUE
        self._round_turn = 0  # which envelope of a round is sampled next

    def begin(self) -> PumpSampler | None:
        """A pump starts: this sampler when it samples (anyone samples), else None."""
        if not self._state.bus.sampled:
            return None
        self.phase = self._next
        self._next = SamplePhase.LAST_DUE if self.phase is SamplePhase.FIRST_DUE else SamplePhase.FIRST_DUE
        return self

    def chose(self, envelope: IncomingMessageEnvelope) -> None:
        """The pump chose ``envelope`` (not as part of a round): sampled when it is the first due."""
        if self.phase is SamplePhase.FIRST_DUE:
            self.phase = SamplePhase.FIRST_SAMPLED
            self._publish(envelope)

    def round(
        self, first: IncomingMessageEnvelope, rest: Sequence[IncomingMessageEnvelope]
    ) -> IncomingMessageEnvelope:
        """The pump processes a round (``first``, then ``rest``): returns the envelope of it that stands
        for the round (each round the next position in turn, so a job of many partitions shows them all;
        a round always starts at the same partition), sampled when the first decision is due. Once this
        pump sampled its first decision, rounds no longer take turns: ``first`` stands for them."""
        if self.phase is SamplePhase.FIRST_SAMPLED:
            return first
        turn = self._round_turn = self._round_turn + 1
        position = turn % (len(rest) + 1)
        picked = rest[position - 1] if position else first
        self.chose(picked)
        return picked

    def end(self, taken: int, last: IncomingMessageEnvelope | None) -> None:
        """The pump ends having taken ``taken`` envelopes, ``last`` the last decision (of a round: the
        one :meth:`round` picked): samples it when the last is due, and what tasks sent. An idle pump
        samples nothing: the next pump takes its turn."""
        if not taken:
            self._next = SamplePhase.LAST_DUE if self.phase is SamplePhase.LAST_DUE else SamplePhase.FIRST_DUE
            return
        if self.phase is SamplePhase.LAST_DUE and last is not None:
            self._publish(last)
        if self._state.bus.messages:
            sample_sent(self._state, first=self.phase is not SamplePhase.LAST_DUE)

    def _publish(self, envelope: IncomingMessageEnvelope) -> None:
        state = self._state
        bus = state.bus
        now = state.clock.now_ms()
        bus.publish_sample(
            ev.ChooserDecision(
                now, envelope.ssp, envelope.offset, describe_choice(state.consumers.chooser, envelope)
            )
        )
        if bus.messages and envelope.offset != END_OF_STREAM_OFFSET:
            task = state.route[envelope.ssp].name
            bus.publish_sample(
                ev.MessageTaken(
                    now,
                    task,
                    envelope.ssp,
                    envelope.offset,
                    envelope.key,
                    envelope.message,
                    envelope.timestamp,
                )
            )


def sample_sent(state: LoopState, first: bool) -> None:
    """Publish a sample of the output sent since the last call: at most one message per task; of the
    loop thread's buffer the ``first`` or the last envelope (callers alternate, so every task's turn
    comes)."""
    bus = state.bus
    now = state.clock.now_ms()
    outputs = state.outputs
    if outputs is not None and outputs.pending:
        sample = outputs.first_sent() if first else outputs.last_sent()
        if sample is not None:
            task, envelope = sample
            bus.publish_sample(
                ev.MessageSent(now, task, envelope.system_stream, envelope.key, envelope.message)
            )
    for ti in state.tasks:
        collector = ti.collector
        if isinstance(collector, TaskCollector) and collector.last_sent is not None:
            envelope, collector.last_sent = collector.last_sent, None
            bus.publish_sample(
                ev.MessageSent(now, ti.name, envelope.system_stream, envelope.key, envelope.message)
            )
