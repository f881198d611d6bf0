"""The run loop's shared state and the bookkeeping every part of it uses: completions, released
callbacks, coordinator requests, readiness and failure (DESIGN §4)."""

from __future__ import annotations

import asyncio
import math
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.container.callbacks import TaskCallbackImpl
from samza_nb.container.coordination import CoordinatorRequests, ReadableCoordinator
from samza_nb.container.task_instance import TaskInstance
from samza_nb.errors import TaskFailedError
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.container.clock import Clock
    from samza_nb.container.consumers import SystemConsumers
    from samza_nb.observe.bus import EventBus

CommitFn = Callable[[TaskInstance, dict["SystemStreamPartition", str]], Coroutine[Any, Any, None]]


@dataclass(frozen=True)
class RunLoopSettings:
    """The run loop's knobs (DESIGN §4 config, already parsed)."""

    window_ms: int = -1
    commit_ms: int = 60000
    callback_timeout_ms: int = -1
    shutdown_ms: int = 30000
    async_commit: bool = False
    slice_ms: float = 5.0
    max_messages: int | None = None


class LoopState:
    """State of one container's run loop, shared by its parts (operations, message pump, main loop)."""

    PUMP_BATCH = 1024

    def __init__(
        self,
        tasks: Sequence[TaskInstance],
        consumers: SystemConsumers,
        commit: CommitFn,
        clock: Clock,
        bus: EventBus,
        settings: RunLoopSettings,
        executor: Executor | None = None,
    ) -> None:
        self.tasks = list(tasks)
        self._by_name = {ti.name: ti for ti in self.tasks}
        self._route: dict[SystemStreamPartition, TaskInstance] = {
            ssp: ti for ti in self.tasks for ssp in ti.ssps
        }
        self._consumers = consumers
        self._commit_fn = commit
        self._clock = clock
        self._bus = bus
        self._settings = settings
        self._executor = executor
        self.requests = CoordinatorRequests(self._by_name)
        self._completions: deque[tuple[TaskCallbackImpl, BaseException | None]] = deque()
        self._callback_lock = threading.Lock()
        self._deadlines: list[tuple[float, int, TaskCallbackImpl]] = []
        self._wakeup = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread_id = 0
        self.failure: BaseException | None = None
        self._stop_requested = False
        self._stopping = False
        self._fast_stale = False
        self._sample_last = False  # which end of a pump a sampled observer hears about next
        self._batch = 64  # messages per pump; adapted to the time a pump takes (see _adapt_batch)
        self.processed = 0
        self._next_window = math.inf
        self._next_commit = math.inf
        for ti in self.tasks:
            self._refresh(ti)

    # -- control from outside ----------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Graceful stop: no new messages; in-flight ones may finish; commit. Safe from any thread."""
        self._stop_requested = True
        self._wake_threadsafe()

    def _wake_threadsafe(self) -> None:
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() == self._thread_id:
            self._wakeup.set()
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._wakeup.set)

    # -- callback listener (any thread) -----------------------------------------------------------------
    def on_complete(self, callback: TaskCallbackImpl) -> None:
        """A callback completed; handled on the loop thread."""
        self._completions.append((callback, None))
        self._wake_threadsafe()

    def on_failure(self, callback: TaskCallbackImpl, error: BaseException) -> None:
        """A callback failed; the container fails."""
        self._completions.append((callback, error))
        self._wake_threadsafe()

    # -- completions and requests -----------------------------------------------------------------------
    def _drain_completions(self) -> None:
        completions = self._completions
        while completions and self.failure is None:
            callback, error = completions.popleft()
            ti = self._by_name[callback.task_name]
            ti.in_flight -= 1
            if error is not None:
                self._fail(ti, callback.ssp, callback.offset, error, "process")
                return
            if self._bus.per_message:
                self._bus.publish(
                    ev.ProcessCompleted(
                        self._clock.now_ms(), ti.name, callback.ssp, callback.offset, ti.in_flight
                    )
                )
            self._release(ti, ti.callbacks.update(callback))
            self._refresh(ti)

    def _release(self, ti: TaskInstance, released: list[TaskCallbackImpl]) -> None:
        """Released callbacks move the low watermark and apply their coordinator requests."""
        for callback in released:
            if callback.offset != END_OF_STREAM_OFFSET:
                ti.last_offsets[callback.ssp] = callback.offset
            if callback.coordinator.requested:
                self._apply_requests(callback.coordinator)

    def _apply_requests(self, coordinator: ReadableCoordinator) -> None:
        self._fast_stale = True
        requests = self.requests
        requests.update(coordinator)
        if requests.commit_requests:
            for name in list(requests.commit_requests):
                target = self._by_name[name]
                requests.commit_requests.discard(name)
                if not target.done:
                    target.need_commit = True
                    self._refresh(target)

    def _refresh(self, ti: TaskInstance) -> None:
        ti.open = (
            ti.in_flight < ti.max_concurrency
            and not ti.need_window
            and not ti.need_commit
            and not ti.window_in_flight
            and (self._settings.async_commit or not ti.commit_in_flight)
            and not ti.eos_ran
            and not ti.done
        )

    # -- failure --------------------------------------------------------------------------------------
    def _fail(
        self,
        ti: TaskInstance,
        ssp: SystemStreamPartition | None,
        offset: str | None,
        error: BaseException,
        what: str,
    ) -> None:
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
        if self._bus.active:
            self._bus.publish(ev.TaskFailed(self._clock.now_ms(), ti.name, ssp, offset, str(failure)))
        self._wakeup.set()

    def _dispatch(self, ti: TaskInstance, envelope: IncomingMessageEnvelope) -> None:
        """Start one message on its task (the message pump provides it)."""
        raise NotImplementedError
