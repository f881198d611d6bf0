"""Starting a message in flight: its callback (with its timeout), and an ``async def process`` run in line
until it first suspends, as an asyncio Task only after (see :mod:`samza_nb.container.loop.coroutines`)."""

from __future__ import annotations

import contextvars
import heapq
from typing import TYPE_CHECKING

from samza_nb.container.loop.callbacks import TaskCallbackImpl
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.container.loop.coroutines import Suspended, resume_coroutine, settle_coroutine

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.task_instance import TaskInstance


def hand_over(state: LoopState, ti: TaskInstance, suspended: Suspended) -> None:
    """The message of ``suspended`` is in flight from now on: its callback is made and a Task drives the
    coroutine on from where it suspended."""
    ti.suspending = True
    callback = start_callback(state, ti, suspended.envelope, suspended.coordinator)
    loop = state.loop
    assert loop is not None
    task = resume_coroutine(suspended.coroutine, suspended.yielded, callback)
    loop.create_task(task, context=suspended.context)


def start_coroutine(state: LoopState, ti: TaskInstance, envelope: IncomingMessageEnvelope) -> None:
    """Process ``envelope`` with the coroutine task ``ti`` (see the module): done in line, failed (the
    container fails), or in flight as a Task from its first suspension on; once one of the task's
    coroutines suspended (:attr:`TaskInstance.suspending`), in flight as a Task from its start."""
    if ti.suspending:
        coordinator = ReadableCoordinator(ti.name)
        callback = start_callback(state, ti, envelope, coordinator)
        loop = state.loop
        assert loop is not None
        try:
            loop.create_task(settle_coroutine(ti.process(envelope, ti.collector, coordinator), callback))
        except Exception as exc:
            callback.failure(exc)
        return
    ssp = envelope.ssp
    quiet = not ti.in_flight and not ti.unreleased
    coordinator = ti.coordinator if quiet else ReadableCoordinator(ti.name)
    context = contextvars.copy_context()
    coroutine = ti.process(envelope, ti.collector, coordinator)
    try:
        yielded = context.run(coroutine.send, None)
    except StopIteration:
        if quiet:
            ti.record_run(ssp, 1, envelope.offset)
            if coordinator.requested:
                state.take_requests(coordinator)
        else:
            start_callback(state, ti, envelope, coordinator).complete()
        return
    except Exception as exc:
        state.fail(ti, ssp, envelope.offset, exc, "process")
        return
    if quiet:
        ti.coordinator = ReadableCoordinator(ti.name)  # the suspended call keeps the one it was given
    hand_over(state, ti, Suspended(envelope, coroutine, yielded, context, coordinator))


def start_callback(
    state: LoopState, ti: TaskInstance, envelope: IncomingMessageEnvelope, coordinator: ReadableCoordinator
) -> TaskCallbackImpl:
    """The callback of a message that is in flight from now on (started, with its timeout): every message
    of the general path takes one here."""
    now_ms = state.clock.now_ms()
    callback = TaskCallbackImpl(
        state,
        state.callback_lock,
        ti.name,
        envelope.ssp,
        envelope.offset,
        ti.callbacks.take_seq(),
        coordinator,
        now_ms,
    )
    ti.message_started(callback)
    if state.settings.callback_timeout_ms > 0:
        deadline = now_ms + state.settings.callback_timeout_ms
        heapq.heappush(state.deadlines, (deadline, callback.seq, callback))
    return callback


__all__ = ["hand_over", "start_callback", "start_coroutine"]
