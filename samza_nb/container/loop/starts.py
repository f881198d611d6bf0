"""Starting a message in flight: its callback (with its timeout), and an ``async def process`` run in line
until it first suspends, under its task's host Task, which drives it on after (see
:mod:`samza_nb.container.loop.coroutines` and :mod:`samza_nb.container.loop.hosts`)."""

from __future__ import annotations

import asyncio
import contextvars
import heapq
from typing import TYPE_CHECKING

from samza_nb.container.loop.callbacks import TaskCallbackImpl
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.container.loop.coroutines import Suspended, cancelled_in_line, settle_coroutine
from samza_nb.container.loop.hosts import InLineHost, first_step
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.task_instance import TaskInstance


def host_for(state: LoopState, ti: TaskInstance) -> InLineHost:
    """The host Task the coroutine task ``ti``'s next in-line segments run under (made when it has none
    that may still adopt)."""
    host = ti.host
    if host is None or not host.usable:
        loop = state.loop
        assert loop is not None

        def lost(host: InLineHost) -> None:
            error = SamzaError(
                "a message processed in line cancelled its own asyncio Task (asyncio.current_task()) and "
                "returned: a Task's cancellation fails its message"
            )
            state.fail(ti, None, None, error, "process")

        host = ti.host = InLineHost(loop, f"{ti.name} (in line)", lost)
    return host


def retire_hosts(state: LoopState) -> None:
    """The run ended: every host that adopted nothing ends quietly."""
    for ti in state.tasks:
        if ti.host is not None:
            ti.host.retire()
            ti.host = None


def hand_over(state: LoopState, ti: TaskInstance, suspended: Suspended) -> None:
    """The message of ``suspended`` is in flight from now on: its callback is made and the host Task its
    segment ran under drives the coroutine on from where it suspended, as its own Task."""
    ti.suspending = True
    callback = start_callback(state, ti, suspended.envelope, suspended.coordinator)
    host = ti.host
    assert host is not None
    ti.host = None
    host.adopt(suspended.coroutine, suspended.yielded, suspended.context, callback)


def start_coroutine(state: LoopState, ti: TaskInstance, envelope: IncomingMessageEnvelope) -> None:
    """Process ``envelope`` with the coroutine task ``ti`` (see the module): done in line, failed (the
    container fails), or in flight as its host's Task from its first suspension on; once one of the
    task's coroutines suspended (:attr:`TaskInstance.suspending`), in flight as a Task from its start."""
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
        yielded = first_step(host_for(state, ti), context, coroutine)
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
    except asyncio.CancelledError as exc:
        state.fail(ti, ssp, envelope.offset, cancelled_in_line(envelope, exc), "process")
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


__all__ = ["hand_over", "host_for", "retire_hosts", "start_callback", "start_coroutine"]
