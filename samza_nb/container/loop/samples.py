"""Samples of the messages tasks send, for the observe bus (:class:`~samza_nb.observe.events.MessageSent`).

Taken once per slice of work while anyone listens (``bus.messages``), never per message: the first or
the last envelope in the loop thread's output buffer, and the last one each task sent straight to its producer
(a task on a thread or an ``async`` task: its collector keeps a reference to it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.container.loop.collector import TaskCollector
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    from samza_nb.container.loop.loop_state import LoopState


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
