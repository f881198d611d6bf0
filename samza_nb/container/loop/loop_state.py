"""The run loop's shared state and the bookkeeping every part of it uses: completions, released
callbacks, coordinator requests and failure."""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.container.loop.callbacks import TaskCallbackImpl
from samza_nb.container.loop.collector import OutputBuffer, OutputSendError
from samza_nb.container.loop.coordination import CoordinatorRequests, ReadableCoordinator
from samza_nb.container.loop.hooks import NO_SCHEDULE, LoopSchedule
from samza_nb.container.loop.task_instance import TaskInstance
from samza_nb.errors import TaskFailedError
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.container.clock import Clock
    from samza_nb.container.consumers import SystemConsumers
    from samza_nb.observe.bus import EventBus

Completion = tuple[TaskCallbackImpl, "BaseException | None"]
"""A callback's completion: the callback and what it failed with (None: it completed)."""

CommitFn = Callable[[TaskInstance, dict["SystemStreamPartition", str]], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class RunLoopSettings:
    """The run loop's knobs, already parsed from config (``task.window.ms``, ``task.commit.ms``, ...)."""

    window_ms: int = -1
    commit_ms: int = 60000
    callback_timeout_ms: int = -1
    shutdown_ms: int = 30000
    async_commit: bool = False
    slice_ms: float = 5.0
    max_messages: int | None = None

    @classmethod
    def from_config(cls, config: Config, max_messages: int | None = None) -> RunLoopSettings:
        """The settings ``config`` gives (``max_messages``: stop after that many messages, None: never)."""
        return cls(
            window_ms=config.value("task.window.ms"),
            commit_ms=config.value("task.commit.ms"),
            callback_timeout_ms=config.value("task.callback.timeout.ms"),
            shutdown_ms=config.value("task.shutdown.ms"),
            async_commit=config.value("task.async.commit"),
            max_messages=max_messages,
        )


class LoopState:
    """State of one container's run loop, shared by its parts (task operations, message pump, main loop),
    and the bookkeeping they share: completions, releases in sequence order, requests, failure.

    Its fields are assigned by itself and by :class:`RunLoop` only; record/replay and steering change
    them through its methods (:meth:`requeue`, :meth:`stop`, :meth:`fail_with`) or the loop's.

    It is the callbacks' listener: ``on_complete``/``on_failure`` may be called from any thread.
    """

    def __init__(
        self,
        tasks: Sequence[TaskInstance],
        consumers: SystemConsumers,
        commit: CommitFn,
        clock: Clock,
        bus: EventBus,
        settings: RunLoopSettings,
        executor: Executor | None = None,
        outputs: OutputBuffer | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self.by_name = {ti.name: ti for ti in self.tasks}
        self.route: dict[SystemStreamPartition, TaskInstance] = {
            ssp: ti for ti in self.tasks for ssp in ti.ssps
        }
        self.consumers = consumers
        self.commit_fn = commit
        self.clock = clock
        self.bus = bus
        self.settings = settings
        self.executor = executor
        self.outputs = outputs
        self.requests = CoordinatorRequests(self.by_name)
        self.completions: deque[Completion] = deque()
        self.callback_lock = threading.Lock()
        self.deadlines: list[tuple[float, int, TaskCallbackImpl]] = []
        self.wakeup = asyncio.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.thread_id = 0
        self.failure: BaseException | None = None
        self.stop_requested = False
        # Record/replay of the schedule (loop/hooks.py); the default's hooks do nothing.
        self.schedule: LoopSchedule = NO_SCHEDULE

    # -- waking the loop ------------------------------------------------------------------------------
    def wake_threadsafe(self) -> None:
        """Wake the loop if it waits; safe from any thread."""
        loop = self.loop
        if loop is None:
            return
        if threading.get_ident() == self.thread_id:
            self.wakeup.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self.wakeup.set)

    # -- callback listener (any thread) -----------------------------------------------------------------
    def on_complete(self, callback: TaskCallbackImpl) -> None:
        """A callback completed; handled on the loop thread."""
        self.completions.append((callback, None))
        self.wake_threadsafe()

    def on_failure(self, callback: TaskCallbackImpl, error: BaseException) -> None:
        """A callback failed; the container fails."""
        self.completions.append((callback, error))
        self.wake_threadsafe()

    # -- completions and requests -----------------------------------------------------------------------
    def drain_completions(self) -> None:
        """Handle the completions reported so far, releasing callbacks in sequence order."""
        completions = self.completions
        taken = self.schedule.taken
        while completions and self.failure is None:
            callback, error = completions.popleft()
            if not taken(callback, error):
                continue  # held by a replay until its record (it comes back through requeue)
            ti = self.by_name[callback.task_name]
            ti.message_completed()
            if error is not None:
                self.fail(ti, callback.ssp, callback.offset, error, "process")
                return
            if self.bus.per_message:
                self.bus.publish(
                    ev.ProcessCompleted(
                        self.clock.now_ms(), ti.name, callback.ssp, callback.offset, ti.in_flight
                    )
                )
            self.release(ti, ti.callbacks.update(callback))

    def requeue(self, completion: Completion) -> None:
        """A completion the schedule held (:meth:`LoopSchedule.taken`) is handled now (on the loop
        thread)."""
        self.completions.append(completion)
        self.wakeup.set()

    def release(self, ti: TaskInstance, released: list[TaskCallbackImpl]) -> None:
        """Released callbacks move the low watermark and apply their coordinator requests."""
        ti.release(released)
        for callback in released:
            if callback.coordinator.requested:
                self.apply_requests(callback.coordinator)

    def apply_requests(self, coordinator: ReadableCoordinator) -> None:
        """Take in the commit and shutdown requests of one released call."""
        requests = self.requests
        requests.update(coordinator)
        if requests.commit_requests:
            for name in list(requests.commit_requests):
                requests.commit_requests.discard(name)
                self.by_name[name].request_commit()

    def take_requests(self, coordinator: ReadableCoordinator) -> None:
        """:meth:`apply_requests` of a coordinator that is reused (a task's own, for its inline calls),
        then reset it for the next call."""
        self.apply_requests(coordinator)
        coordinator.reset()

    def flush_outputs(self) -> None:
        """Hand the output tasks sent on the loop thread to the producers; a refusal fails the sending
        task."""
        outputs = self.outputs
        if outputs is None or not outputs.pending:
            return
        try:
            outputs.flush()
        except OutputSendError as exc:
            self.fail(self.by_name[exc.task_name], None, None, exc.error, "send")

    # -- stop and failure -----------------------------------------------------------------------------
    def stop(self) -> None:
        """Graceful stop: no new messages; in-flight ones may finish; commit. On the loop thread (from
        another: :meth:`RunLoop.request_stop`)."""
        self.stop_requested = True
        self.wakeup.set()

    def fail_with(self, error: BaseException) -> None:
        """The container fails with ``error`` (unless it failed already: the first failure wins)."""
        if self.failure is None:
            self.failure = error
            self.wakeup.set()

    def fail(
        self,
        ti: TaskInstance,
        ssp: SystemStreamPartition | None,
        offset: str | None,
        error: BaseException,
        what: str,
    ) -> None:
        """The container fails with a TaskFailedError naming the task, ``what`` failed and where (the
        first failure wins)."""
        if self.failure is not None:
            return
        where = f" at {ssp} offset {offset}" if ssp is not None else ""
        failure = TaskFailedError(
            f"task {ti.name!r} failed in {what}{where}: {type(error).__name__}: {error}",
            task_name=ti.name,
            ssp=ssp,
            offset=offset,
        )
        failure.__cause__ = error
        self.failure = failure
        if self.bus.active:
            self.bus.publish(ev.TaskFailed(self.clock.now_ms(), ti.name, ssp, offset, str(failure)))
        self.wakeup.set()
