"""Running an ``async def process``: in line until it first suspends, as an asyncio Task only after.

Many coroutines complete without ever suspending (a cache hit, a computation that awaits nothing, an ``await``
of something already done). Such a message needs no asyncio Task of its own, no callback and no trip through
the event loop: :func:`~samza_nb.container.loop.starts.start_coroutine` sends the coroutine its first ``None``
on the loop thread, in a copy of the current context (as ``create_task`` would give it); when it returns, the
message is done there and then. Meanwhile ``asyncio.current_task()`` is the task's standby host Task
(:mod:`samza_nb.container.loop.hosts`), never the container's: the coroutine that suspends is adopted by that
host, which drives it on (in the same context) as its own Task, so whatever its first segment bound to the
current task (``asyncio.timeout``, a task group, a client's timeout) acts on that message alone. The message
is then in flight with its callback as before: concurrency limits, timeouts, out-of-order completion and the
low-watermark release are unchanged for it.

Once a coroutine of a task suspended, the task's later messages skip the in-line try: each starts as a Task
of its own from its start (:attr:`TaskInstance.suspending`), which costs what ``create_task`` costs.

A message that completes in line while nothing of its task is outstanding (in flight or completed but not
released) moves the partition's low watermark at once, as a sync task's message does; with others outstanding
it takes a callback that is completed on the spot, so it is released in its turn.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

from samza_nb.container.loop.hosts import swap_current_task
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.api.task import MessageCollector
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.coordination import ReadableCoordinator
    from samza_nb.container.loop.hosts import InLineHost


@dataclass(frozen=True, slots=True)
class Suspended:
    """A coroutine that suspended in line: its message, the coroutine, what it yielded (the awaitable's
    future, or None), the context it runs in and the coordinator it was given."""

    envelope: IncomingMessageEnvelope
    coroutine: Coroutine[Any, Any, Any]
    yielded: Any
    context: contextvars.Context
    coordinator: ReadableCoordinator


def run_in_line(
    process: Callable[..., Any],
    collector: MessageCollector,
    coordinator: ReadableCoordinator,
    first: IncomingMessageEnvelope,
    rest: Iterable[IncomingMessageEnvelope],
    host: InLineHost,
) -> tuple[
    IncomingMessageEnvelope | None, tuple[IncomingMessageEnvelope, Exception] | None, Suspended | None
]:
    """A run of a coroutine task: ``process``'s coroutine for ``first``, then each of ``rest``, runs in
    line, each in a context copy of its own, with ``host``'s Task as the current task, until one suspends
    or raises, or a call makes a coordinator request. Returns the last message completed (None: none was),
    the message that raised and its error (or None), and the coroutine that suspended (or None), which the
    caller hands to ``host`` to adopt."""
    loop = host.loop
    outer = swap_current_task(loop, host.task)
    try:
        outcome = _in_line(process, collector, coordinator, first, rest)
    finally:
        swap_current_task(loop, outer)
    suspended = outcome[2]
    if suspended is not None and suspended.envelope is first:
        host.suspended_alone()
    return outcome


def _in_line(
    process: Callable[..., Any],
    collector: MessageCollector,
    coordinator: ReadableCoordinator,
    first: IncomingMessageEnvelope,
    rest: Iterable[IncomingMessageEnvelope],
) -> tuple[
    IncomingMessageEnvelope | None, tuple[IncomingMessageEnvelope, Exception] | None, Suspended | None
]:
    # (a function of its own: a try around this loop would make each message's StopIteration dearer)
    copy = contextvars.copy_context
    last: IncomingMessageEnvelope | None = None
    for envelope in chain((first,), rest):
        context = copy()
        coroutine = process(envelope, collector, coordinator)
        try:
            yielded = context.run(coroutine.send, None)
        except StopIteration:
            last = envelope
            if coordinator.requested:
                break
            continue
        except Exception as exc:
            return last, (envelope, exc), None
        except asyncio.CancelledError as exc:  # raised in line: it fails its message, as in a Task
            return last, (envelope, cancelled_in_line(envelope, exc)), None
        return last, None, Suspended(envelope, coroutine, yielded, context, coordinator)
    return last, None, None


def cancelled_in_line(envelope: IncomingMessageEnvelope, exc: asyncio.CancelledError) -> SamzaError:
    """The error of a coroutine that raised CancelledError before it suspended (a Task's cancellation
    fails its message; in line it must not cancel the container's Task instead)."""
    error = SamzaError(f"processing of {envelope.ssp} offset {envelope.offset} was cancelled (in line)")
    error.__cause__ = exc
    return error


async def settle_coroutine(coroutine: Coroutine[Any, Any, Any], callback: TaskCallbackImpl) -> None:
    """Run an ``async def process`` from its start and settle its callback the moment it returns or
    raises (where a schedule or per-message events want every message in flight)."""
    try:
        await coroutine
    except asyncio.CancelledError:
        callback.failure(asyncio.CancelledError(f"processing of offset {callback.offset} was cancelled"))
        raise
    except Exception as exc:
        callback.failure(exc)
    else:
        callback.complete()


__all__ = [
    "Suspended",
    "cancelled_in_line",
    "run_in_line",
    "settle_coroutine",
]
