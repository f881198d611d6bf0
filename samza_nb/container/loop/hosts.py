"""The asyncio Tasks that tasks' code runs on: a host Task per coroutine task for its in-line segments, and
the run loop's own Task, which tells its owner's cancellation from one that code run on it asked for.

**In-line hosts.** An ``async def process`` starts in line (:mod:`samza_nb.container.loop.coroutines`): its
first segment runs on the loop thread, from the run loop's own code, before anything knows whether it will
suspend. Code in that segment that binds the current task (``asyncio.timeout``, ``asyncio.TaskGroup``, a
client library's timeout) must bind a Task that belongs to the message, not the container's: a timeout
firing later cancels what it bound. Python 3.12's eager tasks do this by creating a Task per message and
stepping it at once; that costs a Task per message, which a coroutine that never suspends should not pay
(3.11 has no eager start at all).

An :class:`InLineHost` is a real asyncio Task on standby, one per coroutine task at a time: while a
segment runs in line the loop's current task is swapped to it (two dictionary stores per run of messages,
:func:`swap_current_task`), so ``asyncio.current_task()`` is the host. A message that completes in line
leaves it as it was. The message that suspends is *adopted* (:meth:`InLineHost.adopt`): the host's body
drives the coroutine on from there, in the message's own context, so the Task a timeout or a task group
bound is the Task that runs the message: a timeout cancels that message's await only, a task group's failing
child cancels that message only, exactly as in a Task created for it. The task's next host is made when
it is next needed (after a suspension the task's messages start as Tasks of their own anyway).

**The loop's own Task.** The loop still runs other code of tasks on its own Task: a sync ``process``, a
callback task's ``process_async``, ``window``, ``on_end_of_stream``. Such code can reach
``asyncio.current_task()`` and so cancel the loop. A run that ended cancelled looks like one its caller
cancelled, and callers take that for a stop: messages would be lost without a word. :class:`LoopTask` notes
who asked for a cancellation that did not come from its owner (:meth:`LoopTask.cancel_by_owner`), and
:func:`foreign_cancellation` turns the CancelledError it ends with into a one-line error naming that, with
the task, partition and offset where it can tell.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
from collections.abc import Callable, Coroutine, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from types import FrameType
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.errors import TaskFailedError

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

    __slots__ = ("_cancelled_by_adoptee", "_on_lost", "_retired", "_started", "_work", "loop", "task")

    def __init__(
        self, loop: asyncio.AbstractEventLoop, name: str, on_lost: Callable[[InLineHost], None]
    ) -> None:
        self.loop = loop
        self._on_lost = on_lost
        self._retired = False
        self._cancelled_by_adoptee = False
        self._started = False
        self._work: asyncio.Future[Work] = loop.create_future()
        self.task: asyncio.Task[None] = loop.create_task(self._body(), name=name)
        self.task.add_done_callback(self._ended)

    @property
    def usable(self) -> bool:
        """True while it has adopted nothing and was not cancelled: a segment may run under it."""
        return not self._work.done() and not self.task.done()

    def adopt(
        self,
        coroutine: Coroutine[Any, Any, Any],
        yielded: Any,
        context: contextvars.Context,
        callback: TaskCallbackImpl,
    ) -> None:
        """The message whose segment just suspended under this host goes on as this host's Task. If the
        host is cancelled already: by that very segment (:meth:`suspended_alone`), the await it suspended
        at gets the cancellation, as in a Task of its own, and the host ends quietly; by a message before
        it in the run, which fails the run, the message goes on, on a Task of its own."""
        if not self._work.done():
            self._work.set_result((coroutine, yielded, context, callback))
        elif self._cancelled_by_adoptee:
            self._retired = True
            self.loop.create_task(drive(coroutine, yielded, context, callback, asyncio.CancelledError()))
        else:
            self.loop.create_task(drive(coroutine, yielded, context, callback))

    def suspended_alone(self) -> None:
        """The segment that just suspended is the only one that ran under this host since it was usable
        (:func:`first_step`, or the first message of a run): if the host is cancelled, that segment did it."""
        self._cancelled_by_adoptee = self._work.done()

    def retire(self) -> None:
        """The run ended with nothing adopted: the Task ends quietly."""
        if not self._work.done():
            self._retired = True
            self._work.cancel()

    def _ended(self, task: asyncio.Task[None]) -> None:
        """A Task cancelled before its body started (in the very segment that first ran under it) ends
        without running it: the message it adopted gets the cancellation on a Task of its own."""
        if self._started or self._retired:
            return
        work = self._work
        if work.done() and not work.cancelled():
            coroutine, yielded, context, callback = work.result()
            thrown = asyncio.CancelledError()
            self.loop.create_task(drive(coroutine, yielded, context, callback, thrown))
        else:
            self._on_lost(self)

    async def _body(self) -> None:
        self._started = True
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
        yielded = context.run(coroutine.send, None)
    finally:
        swap_current_task(loop, outer)
    host.suspended_alone()
    return yielded


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


class LoopTaskInstance(Protocol):
    """What the loop's Task names of a task in an error: its name and its messages not yet released."""

    @property
    def name(self) -> str:
        """The task's name."""

    @property
    def unreleased(self) -> Iterable[TaskCallbackImpl]:
        """The callbacks of its messages started and not released, oldest first."""


@dataclass(frozen=True, slots=True)
class Asker:
    """Who asked for a cancellation: the message being processed when a call on the loop's Task asked
    (task, partition, offset), else what asked (a ``Timeout``, a ``TaskGroup``, a function)."""

    what: str
    task_name: str | None = None
    ssp: SystemStreamPartition | None = None
    offset: str | None = None


class LoopTask(asyncio.Task[None]):
    """An asyncio Task that remembers who asked for its last cancellation other than its owner's (one that
    the asker took back, as ``asyncio.timeout`` does when it fires, ends in no CancelledError)."""

    def __init__(
        self,
        coro: Coroutine[Any, Any, None],
        *,
        loop: asyncio.AbstractEventLoop,
        name: str,
        tasks: Sequence[LoopTaskInstance],
    ) -> None:
        """``tasks``: the loop's tasks (an error names them)."""
        super().__init__(coro, loop=loop, name=name)
        self.tasks = tasks
        self.owner_cancelled = False
        self.asked_by: Asker | None = None
        """Who asked for the last cancellation that was not the owner's, or None."""

    def cancel(self, msg: Any | None = None) -> bool:
        """As :meth:`asyncio.Task.cancel`; a cancellation not asked for by the owner is noted first."""
        if not self.owner_cancelled:
            self.asked_by = _asker(sys._getframe(1), self.tasks)
        return super().cancel(msg)

    def cancel_by_owner(self, msg: Any | None = None) -> None:
        """The owner (the container's run, cancelled itself) cancels the loop."""
        self.owner_cancelled = True
        super().cancel(msg)


def _asker(frame: FrameType, tasks: Sequence[LoopTaskInstance]) -> Asker:
    for walk in _outwards(frame):
        envelope = walk.f_locals.get("envelope")
        if isinstance(envelope, IncomingMessageEnvelope):
            locals_ = [outer.f_locals.get(key) for outer in _outwards(walk) for key in ("ti", "self")]
            task = next((ti.name for value in locals_ for ti in tasks if value is ti), None)
            where = f"task {task!r} at {envelope.ssp} offset {envelope.offset}"
            return Asker(where, task, envelope.ssp, envelope.offset)
    caller = frame.f_locals.get("self")
    return Asker(repr(caller) if caller is not None else frame.f_code.co_qualname)


def _outwards(frame: FrameType | None) -> Iterator[FrameType]:
    while frame is not None:
        yield frame
        frame = frame.f_back


def foreign_cancellation(task: LoopTask) -> TaskFailedError:
    """The error a run loop that ended cancelled by code run on it fails with (naming the messages that
    were in flight)."""
    asker = task.asked_by or Asker("unknown")
    in_flight = ", ".join(
        f"task {ti.name!r} {callback.ssp} offset {callback.offset}"
        for ti in task.tasks
        for callback in ti.unreleased
        if not callback.is_done
    )[:400]
    message = (
        f"the run loop's asyncio Task was cancelled by code run on it ({asker.what}): a task's call bound "
        f"asyncio.current_task() (.cancel(), asyncio.timeout, a TaskGroup); the run stopped instead of "
        f"ending as if its caller had cancelled it; in flight: {in_flight or 'nothing'}"
    )
    return TaskFailedError(message, task_name=asker.task_name, ssp=asker.ssp, offset=asker.offset)


__all__ = [
    "Asker",
    "InLineHost",
    "LoopTask",
    "drive",
    "first_step",
    "foreign_cancellation",
    "swap_current_task",
]
