"""Running an ``async def process``: in line until it first suspends, as an asyncio Task only after.

Many coroutines complete without ever suspending (a cache hit, a computation that awaits nothing, an ``await``
of something already done). Such a message needs no asyncio Task, no callback and no trip through the event
loop: :func:`~samza_nb.container.loop.starts.start_coroutine` sends the coroutine its first ``None`` on the
loop thread, in a copy of the current context (as ``create_task`` would give it); when it returns, the message
is done there and then. Only a coroutine that suspends becomes a Task (:func:`resume_coroutine`, in the same
context), which forwards what the coroutine yielded to the event loop, and the message is in flight with its
callback as before: concurrency limits, timeouts, out-of-order completion and the low-watermark release are
unchanged for it.

Once a coroutine of a task suspended, the task's later messages skip the in-line try: each starts as a Task
of its own from its start (:attr:`TaskInstance.suspending`), which costs what ``create_task`` costs (one step
where the in-line try and a forwarding Task took two), and code that binds the current task before its first
await (``asyncio.timeout``, task groups, a client's timeout) binds the message's Task. (Before that first
suspension, an in-line segment runs under the container's own Task.)

A message that completes in line while nothing of its task is outstanding (in flight or completed but not
released) moves the partition's low watermark at once, as a sync task's message does; with others outstanding
it takes a callback that is completed on the spot, so it is released in its turn.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Coroutine, Generator, Iterable
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.api.task import MessageCollector
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.coordination import ReadableCoordinator


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
) -> tuple[
    IncomingMessageEnvelope | None, tuple[IncomingMessageEnvelope, Exception] | None, Suspended | None
]:
    """A run of a coroutine task: ``process``'s coroutine for ``first``, then each of ``rest``, runs in
    line, each in a context copy of its own, until one suspends or raises, or a call makes a coordinator
    request. Returns the last message completed (None: none was), the message that raised and its error
    (or None), and the coroutine that suspended (or None)."""
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
        return last, None, Suspended(envelope, coroutine, yielded, context, coordinator)
    return last, None, None


class _Forward:
    """Awaiting it yields ``value`` (what a suspended coroutine yielded) to the Task that runs the
    awaiting coroutine, and returns what the Task sends back."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.value)


async def resume_coroutine(
    coroutine: Coroutine[Any, Any, Any], yielded: Any, callback: TaskCallbackImpl
) -> None:
    """Drive ``coroutine``, suspended on ``yielded``, to its end (as the body of a Task) and settle
    ``callback`` the moment it returns or raises; a cancellation is thrown into it, as a Task would."""
    try:
        while True:
            try:
                sent = await _Forward(yielded)
            except BaseException as exc:  # the Task threw it in (a cancellation): the coroutine decides
                yielded = coroutine.throw(exc)
            else:
                yielded = coroutine.send(sent)
    except StopIteration:
        callback.complete()
    except asyncio.CancelledError:
        callback.failure(asyncio.CancelledError(f"processing of offset {callback.offset} was cancelled"))
        raise
    except Exception as exc:
        callback.failure(exc)


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
    "resume_coroutine",
    "run_in_line",
    "settle_coroutine",
]
