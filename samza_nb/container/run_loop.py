"""The run loop: Samza's event loop on asyncio (DESIGN §4).

It chooses messages, hands them to their tasks, runs window and commit on timers and requests, releases
completions in sequence order (the low watermark), and stops on request, on end-of-stream or on failure.
Synchronous tasks run inline in tight slices; the loop yields to asyncio between slices and sleeps (never
spins) when nothing can progress.
"""

from __future__ import annotations

import asyncio
import functools
import heapq
import math
import threading
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.chooser.trace import describe_choice
from samza_nb.container.callbacks import TaskCallbackImpl
from samza_nb.container.coordination import CoordinatorRequests, ReadableCoordinator
from samza_nb.container.task_instance import TaskInstance, TaskKind
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


class RunLoop:
    """Runs the tasks of one container until they are done, a stop is requested, or one fails."""

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

    # -- main loop --------------------------------------------------------------------------------------
    async def run(self) -> None:
        """Run until done; raises TaskFailedError (or the consumers' error) on failure."""
        self._loop = asyncio.get_running_loop()
        self._thread_id = threading.get_ident()
        clock, settings = self._clock, self._settings
        start = clock.now_ms()
        if settings.window_ms > 0 and any(ti.windowable for ti in self.tasks):
            self._next_window = start + settings.window_ms
        if settings.commit_ms > 0:
            self._next_commit = start + settings.commit_ms
        # Slices are measured in real time (not the injectable clock): they keep the asyncio loop, and so
        # a notebook, responsive.
        last_yield = time.perf_counter()
        slice_s = settings.slice_ms / 1000.0
        while True:
            self._wakeup.clear()
            if self._completions:
                self._drain_completions()
            now = clock.now_ms()
            self._fire_timers(now)
            if self._deadlines:
                self._check_timeouts(now)
            if self._consumers.failure is not None and self.failure is None:
                self.failure = self._consumers.failure
            if self.failure is not None or self._should_stop():
                break
            progressed = self._run_ops()
            if self.failure is None and not self.requests.shutdown_now:
                progressed = self._pump() > 0 or progressed
            if self.failure is not None:
                break
            if progressed or self._stop_requested:
                if time.perf_counter() - last_yield >= slice_s:
                    await asyncio.sleep(0)
                    last_yield = time.perf_counter()
                continue
            await clock.wait(self._wakeup, self._next_deadline(now))
            last_yield = time.perf_counter()
        if self.failure is None:
            await self._drain_and_commit()
        if self.failure is not None:
            raise self.failure

    def _should_stop(self) -> bool:
        if self._stop_requested:
            return True
        if self.requests.shutdown_now:
            # Pending commits run before stopping.
            return not any(ti.need_commit or ti.commit_in_flight for ti in self.tasks)
        return all(ti.done for ti in self.tasks)

    def _next_deadline(self, now: float) -> float | None:
        deadline = min(self._next_window, self._next_commit)
        if self._deadlines:
            deadline = min(deadline, self._deadlines[0][0])
        return None if deadline == math.inf else max(deadline - now, 0.0)

    # -- timers -----------------------------------------------------------------------------------------
    def _fire_timers(self, now: float) -> None:
        if now >= self._next_window:
            period = self._settings.window_ms
            self._next_window += period * (math.floor((now - self._next_window) / period) + 1)
            for ti in self.tasks:
                if ti.windowable and not ti.done:
                    ti.need_window = True
                    self._refresh(ti)
        if now >= self._next_commit:
            period = self._settings.commit_ms
            self._next_commit += period * (math.floor((now - self._next_commit) / period) + 1)
            for ti in self.tasks:
                if not ti.done:
                    ti.need_commit = True
                    self._refresh(ti)

    def _check_timeouts(self, now: float) -> None:
        heap = self._deadlines
        while heap and heap[0][2].is_done:
            heapq.heappop(heap)
        if heap and heap[0][0] <= now:
            _, _, callback = heapq.heappop(heap)
            callback.failure(
                TimeoutError(
                    f"callback of task {callback.task_name!r} for {callback.ssp} offset {callback.offset} "
                    f"timed out after {self._settings.callback_timeout_ms} ms"
                )
            )
            self._drain_completions()

    # -- per-task operations: commit, window, end-of-stream, parked messages (DESIGN §4.2) -------------
    def _run_ops(self) -> bool:
        progressed = False
        async_commit = self._settings.async_commit
        for ti in self.tasks:
            if ti.done or self.failure is not None:
                continue
            busy = ti.window_in_flight or ti.commit_in_flight
            if ti.need_commit:
                if not busy and (ti.in_flight == 0 or async_commit):
                    self._start_commit(ti)
                    progressed = True
                continue
            if ti.need_window:
                if not busy and ti.in_flight == 0:
                    self._start_window(ti)
                    progressed = True
                continue
            if ti.end_of_stream and not ti.pending and ti.in_flight == 0 and not busy:
                self._run_end_of_stream(ti)
                progressed = True
                continue
            while ti.pending and ti.open and self.failure is None and not self.requests.shutdown_now:
                envelope = ti.pending.popleft()
                if envelope.ssp in ti.check_start and ti.is_before_start(envelope):
                    self._consumers.refill(envelope.ssp)
                else:
                    self._dispatch(ti, envelope)
                progressed = True
        return progressed

    def _start_commit(self, ti: TaskInstance) -> None:
        ti.need_commit = False
        ti.commit_in_flight = True
        self._refresh(ti)
        offsets = dict(ti.last_offsets)
        loop = self._loop
        assert loop is not None
        task = loop.create_task(self._commit_fn(ti, offsets), name=f"commit-{ti.name}")
        task.add_done_callback(functools.partial(self._on_commit_done, ti, offsets))

    def _on_commit_done(self, ti: TaskInstance, offsets: dict[Any, str], task: asyncio.Task[None]) -> None:
        ti.commit_in_flight = False
        self._wakeup.set()
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self._fail(ti, None, None, error, "commit")
            return
        ti.committed_offsets = offsets
        if ti.end_of_stream and ti.eos_ran:
            ti.done = True
            self.requests.vote_shutdown(ti.name)
        self._release(ti, ti.callbacks.release_more())
        self._refresh(ti)

    def _start_window(self, ti: TaskInstance) -> None:
        ti.need_window = False
        ti.window_in_flight = True
        self._refresh(ti)
        coordinator = ReadableCoordinator(ti.name)
        window = ti.task.window
        if self._executor is None:
            try:
                window(ti.collector, coordinator)
            except Exception as exc:
                self._fail(ti, None, None, exc, "window")
                return
            self._after_window(ti, coordinator, None)
        else:
            future = self._executor.submit(window, ti.collector, coordinator)
            loop = self._loop
            assert loop is not None
            future.add_done_callback(
                lambda f: loop.call_soon_threadsafe(self._after_window, ti, coordinator, f)
            )

    def _after_window(
        self, ti: TaskInstance, coordinator: ReadableCoordinator, future: Future[Any] | None
    ) -> None:
        ti.window_in_flight = False
        self._wakeup.set()
        if future is not None and future.exception() is not None:
            self._fail(ti, None, None, future.exception(), "window")  # type: ignore[arg-type]
            return
        if self._bus.active:
            self._bus.publish(ev.WindowFired(self._clock.now_ms(), ti.name))
        self._apply_requests(coordinator)
        self._refresh(ti)

    def _run_end_of_stream(self, ti: TaskInstance) -> None:
        ti.eos_ran = True
        coordinator = ReadableCoordinator(ti.name)
        if ti.has_end_of_stream_listener:
            try:
                ti.task.on_end_of_stream(ti.collector, coordinator)
            except Exception as exc:
                self._fail(ti, None, None, exc, "on_end_of_stream")
                return
        if self._bus.active:
            self._bus.publish(ev.EndOfStreamReached(self._clock.now_ms(), ti.name, None, True))
        self._apply_requests(coordinator)
        ti.need_commit = True  # the final commit; the task is done once it ran
        self._refresh(ti)

    # -- messages ---------------------------------------------------------------------------------------
    def _pump(self) -> int:
        """Choose and dispatch up to PUMP_BATCH messages (the per-message hot path); returns how many
        envelopes it took from the chooser.

        Messages of sync tasks on the loop thread run in an inner loop that pays per message only for
        choosing, refilling, the call and the offset; anything else (end-of-stream, a parked or skipped
        message, another kind of task, a coordinator request) goes through the general path.
        """
        consumers = self._consumers
        chooser = consumers.chooser
        # Optional chooser fast path: a C-level callable that raises IndexError when empty.
        take = getattr(chooser, "take", None)
        # Optional batching fast path: a run of one partition's envelopes taken straight from its buffer.
        choose_run = getattr(chooser, "choose_run", None)
        end_run = getattr(chooser, "end_run", None)
        choose = chooser.choose
        update = consumers.chooser.update
        buffers = consumers.buffers
        route = self._route
        observing = self._bus.per_message
        budget = self._batch
        started = time.perf_counter()
        if self._settings.max_messages is not None:
            budget = min(budget, self._settings.max_messages - self.processed)
            if budget <= 0:
                self._stop_requested = True
                return 0
        # A sampled observer gets the first decision of each pump (a few ms of work apart).
        sample = not observing and self._bus.sampled
        fast = {} if observing else self._fast_entries()
        fast_get = fast.get
        count = 0  # messages started (budget)
        inline = 0  # of which on the inline fast path (_dispatch counts its own)
        taken = 0  # envelopes taken from the chooser (end-of-stream, skipped and parked ones too)
        held: IncomingMessageEnvelope | None = None
        while count < budget:
            if held is None:
                envelope = choose()
                if envelope is None:
                    break
                taken += 1
            else:
                envelope, held = held, None
            if sample:
                sample = False
                self._bus.publish(
                    ev.ChooserDecision(
                        self._clock.now_ms(),
                        envelope.ssp,
                        envelope.offset,
                        describe_choice(chooser, envelope),
                    )
                )
            ssp = envelope.ssp
            entry = fast_get(ssp)
            if entry is not None and envelope.offset != END_OF_STREAM_OFFSET:
                # -- inner loop: sync tasks on the loop thread, completion = the call returning --
                n = 0
                room = budget - count
                current = entry
                ti, process, collector, coordinator, last_offsets = entry
                since = 0  # messages of ``ti`` not yet added to ti.processed
                run_left = 0  # envelopes of ``ssp`` the batching layer lets us take from its buffer
                run_taken = 0
                run_ssp = None  # while set, this partition's refill is owed (deferred by the run)
                while True:
                    if entry is not current:
                        ti.processed += n - since
                        since = n
                        current = entry
                        ti, process, collector, coordinator, last_offsets = entry
                    if run_ssp is None:
                        buffer = buffers[ssp]
                        if buffer:
                            update(buffer.popleft())
                        else:
                            consumers.refill(ssp)
                    try:
                        process(envelope, collector, coordinator)
                    except Exception as exc:
                        self._fail(ti, ssp, envelope.offset, exc, "process")
                        break
                    last_offsets[ssp] = envelope.offset
                    n += 1
                    if coordinator.requested:
                        self._apply_requests(coordinator)
                        coordinator.reset()
                        fast = self._fast_entries()
                        fast_get = fast.get
                        break
                    if n >= room:
                        break
                    if run_ssp is not None:
                        buffer = buffers[ssp]
                        if run_left and buffer and buffer[0].offset != END_OF_STREAM_OFFSET:
                            envelope = buffer.popleft()
                            run_left -= 1
                            run_taken += 1
                            continue
                        end_run(run_taken)  # type: ignore[misc]
                        run_ssp = None
                        consumers.refill(ssp)
                    if take is not None:
                        try:
                            envelope = take()
                        except IndexError:
                            break
                    elif choose_run is not None:
                        envelope, run_left = choose_run()
                        if envelope is None:
                            break
                        if run_left:
                            run_ssp, run_taken = envelope.ssp, 0
                    else:
                        envelope = choose()
                        if envelope is None:
                            break
                    ssp = envelope.ssp
                    entry = fast_get(ssp)
                    if entry is None or envelope.offset == END_OF_STREAM_OFFSET:
                        held = envelope
                        run_ssp = None  # the general path refills it as usual
                        break
                if run_ssp is not None:
                    end_run(run_taken)  # type: ignore[misc]
                    consumers.refill(run_ssp)
                ti.processed += n - since
                taken += n - 1 + (held is not None)
                count += n
                inline += n
                if self.failure is not None or self.requests.shutdown_now:
                    break
                continue
            # -- general path --
            ti = route[ssp]
            if observing:
                trace = getattr(chooser, "last_choice", None)
                self._bus.publish(ev.ChooserDecision(self._clock.now_ms(), ssp, envelope.offset, trace))
            if envelope.offset == END_OF_STREAM_OFFSET:
                self._on_partition_end(ti, ssp)
                fast.pop(ssp, None)
                continue
            if ti.pending or not ti.open:
                ti.pending.append(envelope)  # parked: its partition is not refilled until it runs
                continue
            if ssp in ti.check_start and ti.is_before_start(envelope):
                consumers.refill(ssp)
                continue
            self._dispatch(ti, envelope)
            count += 1
            if self.failure is not None or self.requests.shutdown_now:
                break
            if self._fast_stale and not observing:
                # A request released by that dispatch may have closed another task.
                fast = self._fast_entries()
                fast_get = fast.get
            if not observing and ti.inline and ssp not in ti.check_start and ti.open and not ti.pending:
                fast[ssp] = (ti, ti.process, ti.collector, ti.coordinator, ti.last_offsets)
        if held is not None:
            # Taken but not run (budget, failure or stop): it waits, parked, for its task.
            route[held.ssp].pending.appendleft(held)
        self.processed += inline
        if count:
            self._adapt_batch(count, budget, time.perf_counter() - started)
        return taken

    def _adapt_batch(self, count: int, budget: int, elapsed_s: float) -> None:
        """Size the next pump so it takes about one slice: slow tasks get small batches (timers, stops
        and the notebook are never kept waiting long), fast ones up to PUMP_BATCH."""
        slice_s = self._settings.slice_ms / 1000.0
        if elapsed_s > slice_s:
            self._batch = max(1, int(count * slice_s / elapsed_s))
        elif count >= budget and elapsed_s < slice_s / 4:
            self._batch = min(self.PUMP_BATCH, budget * 2)

    def _fast_entries(self) -> dict[SystemStreamPartition, tuple[Any, ...]]:
        """Partitions whose next message may take the inline fast path right now."""
        self._fast_stale = False
        return {
            ssp: (ti, ti.process, ti.collector, ti.coordinator, ti.last_offsets)
            for ti in self.tasks
            if ti.inline and ti.open and not ti.pending
            for ssp in ti.ssps
            if ssp not in ti.check_start
        }

    def _dispatch(self, ti: TaskInstance, envelope: IncomingMessageEnvelope) -> None:
        """Start one message on its task (any kind); its partition's next envelope goes to the chooser."""
        ssp = envelope.ssp
        self._consumers.refill(ssp)
        self.processed += 1
        if ti.inline:
            coordinator = ti.coordinator
            if self._bus.per_message:
                self._bus.publish(ev.ProcessStarted(self._clock.now_ms(), ti.name, ssp, envelope.offset, 1))
            try:
                ti.process(envelope, ti.collector, coordinator)
            except Exception as exc:
                self._fail(ti, ssp, envelope.offset, exc, "process")
                return
            ti.last_offsets[ssp] = envelope.offset
            ti.processed += 1
            if self._bus.per_message:
                self._bus.publish(ev.ProcessCompleted(self._clock.now_ms(), ti.name, ssp, envelope.offset, 0))
            if coordinator.requested:
                self._apply_requests(coordinator)
                coordinator.reset()
            return
        coordinator = ReadableCoordinator(ti.name)
        callback = TaskCallbackImpl(
            self, self._callback_lock, ti.name, ssp, envelope.offset, ti.callbacks.take_seq(), coordinator
        )
        ti.in_flight += 1
        ti.processed += 1
        self._refresh(ti)
        if self._settings.callback_timeout_ms > 0:
            deadline = self._clock.now_ms() + self._settings.callback_timeout_ms
            heapq.heappush(self._deadlines, (deadline, callback.seq, callback))
        if self._bus.per_message:
            self._bus.publish(
                ev.ProcessStarted(self._clock.now_ms(), ti.name, ssp, envelope.offset, ti.in_flight)
            )
        try:
            if ti.kind is TaskKind.CALLBACK:
                ti.task.process_async(envelope, ti.collector, coordinator, callback)
            elif ti.kind is TaskKind.COROUTINE:
                loop = self._loop
                assert loop is not None
                loop.create_task(_settle_coroutine(ti.process(envelope, ti.collector, coordinator), callback))
            else:
                assert self._executor is not None
                future = self._executor.submit(ti.process, envelope, ti.collector, coordinator)
                future.add_done_callback(functools.partial(_settle_from_future, callback))
        except Exception as exc:
            callback.failure(exc)
        if self._completions:
            self._drain_completions()

    def _on_partition_end(self, ti: TaskInstance, ssp: SystemStreamPartition) -> None:
        self._consumers.refill(ssp)
        ti.open_ssps.discard(ssp)
        if not ti.open_ssps:
            ti.end_of_stream = True
        if self._bus.active:
            self._bus.publish(ev.EndOfStreamReached(self._clock.now_ms(), ti.name, ssp, False))

    # -- completions ------------------------------------------------------------------------------------
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

    # -- failure and stop -------------------------------------------------------------------------------
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

    async def _drain_and_commit(self) -> None:
        """Graceful end: let in-flight work finish (up to task.shutdown.ms), then commit every task."""
        self._stopping = True
        self._consumers.stop_fetching()
        clock = self._clock
        deadline = clock.now_ms() + self._settings.shutdown_ms
        while self.failure is None:
            self._wakeup.clear()
            if self._completions:
                self._drain_completions()
            if self._deadlines:
                self._check_timeouts(clock.now_ms())
            busy = [ti for ti in self.tasks if ti.in_flight or ti.commit_in_flight or ti.window_in_flight]
            now = clock.now_ms()
            if not busy or now >= deadline:
                break
            await clock.wait(self._wakeup, deadline - now)
        if self.failure is not None:
            return
        for ti in self.tasks:
            if not ti.done and ti.last_offsets != ti.committed_offsets:
                offsets = dict(ti.last_offsets)
                try:
                    await self._commit_fn(ti, offsets)
                except Exception as exc:
                    self._fail(ti, None, None, exc, "commit")
                    return
                ti.committed_offsets = offsets


async def _settle_coroutine(coroutine: Coroutine[Any, Any, Any], callback: TaskCallbackImpl) -> None:
    """Run an ``async def process`` and settle its callback the moment it returns or raises."""
    try:
        await coroutine
    except asyncio.CancelledError:
        callback.failure(asyncio.CancelledError(f"processing of offset {callback.offset} was cancelled"))
        raise
    except Exception as exc:
        callback.failure(exc)
    else:
        callback.complete()


def _settle_from_future(callback: TaskCallbackImpl, future: Future[Any]) -> None:
    error = future.exception()
    if error is not None:
        callback.failure(error)
    else:
        callback.complete()
