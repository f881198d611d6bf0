"""A Task of its own for a coroutine's in-line segment: what ``asyncio.current_task()`` gives it.

An ``async def process`` starts in line (:mod:`samza_nb.container.loop.coroutines`): its first segment runs
on the loop thread, from the run loop's own code, before anything knows whether it will suspend. Code in that
segment that binds the current task (``asyncio.timeout``, ``asyncio.TaskGroup``, a client library's
timeout) must bind a Task that belongs to the message, not the container's: a timeout firing later cancels
what it bound. Python 3.12's eager tasks do this by creating a Task per message and stepping it at once;
that costs a Task per message, which a coroutine that never suspends should not pay (3.11 has no eager
start at all).

An :class:`InLineHost` is a real asyncio Task on standby, one per coroutine task at a time: while a
segment runs in line the loop's current task is swapped to it (two dictionary stores per run of messages,
:func:`swap_current_task`), so ``asyncio.current_task()`` is the host. A message that completes in line
leaves it as it was. The message that suspends is *adopted* (:meth:`InLineHost.adopt`): the host's body
drives the coroutine on from there, in the message's own context, so the Task a timeout or a task group
bound is the Task that runs the message: a timeout cancels that message's await only, a task group's failing
child cancels that message only, exactly as in a Task created for it. The task's next host is made when
it is next needed (after a suspension the task's messages start as Tasks of their own anyway).
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.container.loop.callbacks import TaskCallbackImpl

if sys.version_info >= (3, 12):
    from asyncio.tasks import _swap_current_task as swap_current_task
else:
    from asyncio.tasks import _current_tasks  # type: ignore[attr-defined]  # the dict current_task() reads

    def swap_current_task(
        loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any] | None
    ) -> asyncio.Task[Any] | None:
        """Make ``task`` the current task of ``loop`` (None: no task) and return the one that was (3.12's
        ``asyncio.tasks._swap_current_task``)."""
        previous: asyncio.Task[Any] | None = _current_tasks.get(loop)
        if task is None:
            _current_tasks.pop(loop, None)
        else:
            _current_tasks[loop] = task
        return previous


Work = tuple[Coroutine[Any, Any, Any], Any, contextvars.Context, "TaskCallbackImpl"]
"""What a host adopts: the suspended coroutine, what it yielded, its context, its message's callback."""


class InLineHost:
    """A standby Task that is the current task of a coroutine task's in-line segments, and the Task that
    drives the one of them that suspends (see the module). ``on_lost`` is called (with the host) if the Task
    is cancelled before it adopted a message: a message that completed in line cancelled its own Task,
    which fails that message as a Task's cancellation would."""

    __slots__ = ("_on_lost", "_retired", "_work", "loop", "task")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, name: str, on_lost: Callable[[InLineHost], None]
    ) -> None:
        self.loop = loop
        self._on_lost = on_lost
        self._retired = False
        self._work: asyncio.Future[Work] = loop.create_future()
        self.task: asyncio.Task[None] = loop.create_task(self._body(), name=name)

    @property
    def usable(self) -> bool:
        """True while it has adopted nothing and was not cancelled: a segment may run under it."""
        return not self._work.done()

    def adopt(
        self,
        coroutine: Coroutine[Any, Any, Any],
        yielded: Any,
        context: contextvars.Context,
        callback: TaskCallbackImpl,
    ) -> None:
        """The message whose segment just suspended under this host goes on as this host's Task."""
        self._work.set_result((coroutine, yielded, context, callback))

    def retire(self) -> None:
        """The run ended with nothing adopted: the Task ends quietly."""
        if not self._work.done():
            self._retired = True
            self._work.cancel()

    async def _body(self) -> None:
        work = self._work
        thrown: BaseException | None = None
        try:
            await work
        except asyncio.CancelledError as exc:
            if work.cancelled():  # retired, or cancelled by a message that completed in line
                if not self._retired:
                    self._on_lost(self)
                return
            thrown = exc  # cancelled between the adoption and this step: the coroutine gets it
        coroutine, yielded, context, callback = work.result()
        await drive(coroutine, yielded, context, callback, thrown)


def first_step(host: InLineHost, context: contextvars.Context, coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Send ``coroutine`` its first None in ``context`` with ``host``'s Task as the current task; returns
    what it yielded (it raises StopIteration when the coroutine returned, or what the coroutine raised)."""
    loop = host.loop
    outer = swap_current_task(loop, host.task)
    try:
        return context.run(coroutine.send, None)
    finally:
        swap_current_task(loop, outer)


class _Forward:
    """Awaiting it yields ``value`` (what a suspended coroutine yielded) to the Task that runs the
    awaiting coroutine, and returns what the Task sends back."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __await__(self) -> Generator[Any, Any, Any]:
        return (yield self.value)


async def drive(
    coroutine: Coroutine[Any, Any, Any],
    yielded: Any,
    context: contextvars.Context,
    callback: TaskCallbackImpl,
    thrown: BaseException | None = None,
) -> None:
    """Drive ``coroutine``, suspended on ``yielded``, to its end in ``context`` (as the body of a Task) and
    settle ``callback`` the moment it returns or raises; a cancellation is thrown into it, as a Task would
    (``thrown``: one that came before the first step, after the future it awaits is cancelled)."""
    run, send, throw = context.run, coroutine.send, coroutine.throw
    try:
        if thrown is not None:
            if isinstance(yielded, asyncio.Future):
                yielded.cancel()
            yielded = run(throw, thrown)
        while True:
            try:
                sent = await _Forward(yielded)
            except BaseException as exc:  # the Task threw it in (a cancellation): the coroutine decides
                yielded = run(throw, exc)
            else:
                yielded = run(send, sent)
    except StopIteration:
        callback.complete()
    except asyncio.CancelledError:
        callback.failure(asyncio.CancelledError(f"processing of offset {callback.offset} was cancelled"))
        raise
    except Exception as exc:
        callback.failure(exc)


__all__ = ["InLineHost", "drive", "first_step", "swap_current_task"]
