"""The run loop: Samza's event loop on asyncio.

It chooses messages, hands them to their tasks, runs window and commit on timers and requests, releases
completions in sequence order (the low watermark), and stops on request, on end-of-stream or on failure.
Synchronous tasks run inline in tight slices; the loop yields to asyncio between slices and sleeps (never
spins) when nothing can progress. Its parts: :class:`LoopState` (shared state and bookkeeping),
:class:`TaskOperations` (commit, window, end-of-stream), :class:`MessagePump` (messages).
"""

from __future__ import annotations

import asyncio
import heapq
import math
import threading
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from samza_nb import crash_points
from samza_nb.container.loop.hosts import LoopTask, foreign_cancellation
from samza_nb.container.loop.loop_state import CommitFn, LoopState, RunLoopSettings
from samza_nb.container.loop.pump import MessagePump
from samza_nb.container.loop.samples import PumpSampler
from samza_nb.container.loop.starts import host_for, retire_hosts
from samza_nb.container.loop.task_ops import Op, TaskOperations

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.container.loop.hooks import LoopSchedule, Steering
    from samza_nb.container.loop.task_instance import TaskInstance

__all__ = ["CommitFn", "RunLoop", "RunLoopSettings"]


class RunLoop:
    """Runs the tasks of one container until they are done, a stop is requested, or one fails."""

    def __init__(self, state: LoopState) -> None:
        """``state`` holds the tasks, consumers, commit function, clock, bus, settings, executor and the
        output buffer the loop hands to the producers before it yields to the event loop."""
        self.state = state
        self.tasks = state.tasks
        self._ops = TaskOperations(state)
        self._pump = MessagePump(state, PumpSampler(state))
        self._next_window = math.inf
        self._next_commit = math.inf
        self._steering: Steering | None = None  # set while a pause, step or swap is asked for or under way

    @property
    def processed(self) -> int:
        """Messages started so far."""
        return self._pump.processed

    @property
    def failure(self) -> BaseException | None:
        """The error the loop failed with, if it did."""
        return self.state.failure

    def request_stop(self) -> None:
        """Graceful stop: no new messages; in-flight ones may finish; commit. Safe from any thread."""
        self.state.stop_requested = True
        self.state.wake_threadsafe()

    def wake(self) -> None:
        """New input may be available (safe from any thread)."""
        self.state.wake_threadsafe()

    # -- main loop --------------------------------------------------------------------------------------
    async def run(self) -> None:
        """Run until done; raises TaskFailedError (or the consumers' error) on failure."""
        state = self.state
        loop = state.loop = asyncio.get_running_loop()
        state.thread_id = threading.get_ident()
        # The loop runs on a Task of its own, which tells this run's cancellation from one asked for by
        # code run on it (loop/hosts.py): that fails the run loudly instead of ending it as if cancelled.
        for ti in state.tasks:
            if ti.coroutine:  # hosts of in-line segments: made first, they start before any runs under them
                host_for(state, ti)
        task = LoopTask(self._guarded(), loop=loop, name="samza-nb run loop", tasks=state.tasks)
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if not task.done():  # this run was cancelled: so is the loop
                task.cancel_by_owner()
                await asyncio.wait({task})
            if not task.cancelled():
                task.exception()  # retrieved: the cancellation is what the caller sees
            raise
        finally:
            retire_hosts(state)  # the standby Tasks of in-line coroutine segments (loop/hosts.py)

    async def _guarded(self) -> None:
        try:
            await self._run()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            assert isinstance(task, LoopTask)
            if task.owner_cancelled:
                raise
            raise foreign_cancellation(task) from None

    async def _run(self) -> None:
        state = self.state
        self._start_timers()
        # Slices are measured in real time (not the injectable clock): they keep the asyncio loop, and so
        # a notebook, responsive.
        last_yield = time.perf_counter()
        slice_s = state.settings.slice_ms / 1000.0
        clock = state.clock
        while True:
            state.wakeup.clear()
            if state.completions:
                state.drain_completions()
            now = clock.now_ms()
            self._fire_timers(now)
            if state.deadlines:
                self._check_timeouts(now)
            if state.consumers.failure is not None and state.failure is None:
                state.failure = state.consumers.failure
            if state.failure is not None or self._should_stop():
                break
            if (
                self._steering is not None
            ):  # pause, step, swap (steering/loop_steering.py): one check per slice
                await self._steering.steer()
                self._steering = None
                continue
            progressed = self._run_ops()
            if state.failure is None and not state.requests.shutdown_now:
                progressed = self._pump.pump() > 0 or progressed
            state.flush_outputs()
            if state.failure is not None:
                break
            if progressed or state.stop_requested:
                if time.perf_counter() - last_yield >= slice_s:
                    await asyncio.sleep(0)
                    last_yield = time.perf_counter()
                continue
            await clock.wait(state.wakeup, self._next_deadline(now))
            last_yield = time.perf_counter()
        state.schedule.loop_ended()  # record/replay (loop/hooks.py)
        if state.failure is None:
            await self._drain_and_commit()
        if state.failure is not None:
            raise state.failure

    def _run_ops(self) -> bool:
        """Per task: its due operation (commit > window > end-of-stream), else its parked messages."""
        state = self.state
        progressed = False
        for ti in state.tasks:
            if ti.done or state.failure is not None:
                continue
            op = self._ops.start_due(ti)
            if op.started:
                progressed = True
            elif op is Op.PROCESS and ti.pending:
                progressed = self._pump.start_parked(ti) or progressed
        return progressed

    def _should_stop(self) -> bool:
        state = self.state
        if state.stop_requested:
            return True
        if state.requests.shutdown_now:
            # Pending commits run before stopping (a done task has none).
            return not any((ti.need_commit or ti.commit_in_flight) and not ti.done for ti in state.tasks)
        return all(ti.done for ti in state.tasks)

    def _next_deadline(self, now: float) -> float | None:
        deadline = min(self._next_window, self._next_commit)
        if self.state.deadlines:
            deadline = min(deadline, self.state.deadlines[0][0])
        return None if deadline == math.inf else max(deadline - now, 0.0)

    # -- what record/replay, pause, step, live knobs and swap ask of the loop (loop/hooks.py) --------------
    def use_schedule(self, schedule: LoopSchedule) -> None:
        """Record or replay with ``schedule`` (before the loop runs): it is told of each batch polled
        (:meth:`LoopSchedule.polled`) and its hooks are called from now on."""
        state = self.state
        state.schedule = schedule
        state.consumers.intake = schedule.polled

    def steer_with(self, steering: Steering) -> None:
        """Hand ``steering`` the turn instead of dispatching, until its :meth:`Steering.steer` returns
        (on the loop's thread)."""
        self._steering = steering
        self.state.wakeup.set()

    def start_due(self, ti: TaskInstance) -> Op:
        """:meth:`TaskOperations.start_due` of the loop's own task operations."""
        return self._ops.start_due(ti)

    def step_one(self, ti: TaskInstance, envelope: IncomingMessageEnvelope | None) -> int:
        """:meth:`MessagePump.step_one` of the loop's own pump."""
        return self._pump.step_one(ti, envelope)

    def set_periods(self, window_ms: int | None = None, commit_ms: int | None = None) -> None:
        """Live ``task.window.ms``/``task.commit.ms``: the timers start again from now with them."""
        state = self.state
        settings = state.settings
        if window_ms is not None:
            settings = replace(settings, window_ms=window_ms)
            for ti in state.tasks:
                ti.set_window_enabled(window_ms > 0)
        if commit_ms is not None:
            settings = replace(settings, commit_ms=commit_ms)
        state.settings = settings
        self._next_window = self._next_commit = math.inf
        self._start_timers()

    def settle(self) -> None:
        """What every turn of the loop does before its work: completions, callback timeouts, output."""
        state = self.state
        if state.completions:
            state.drain_completions()
        if state.deadlines:
            self._check_timeouts(state.clock.now_ms())
        state.flush_outputs()

    def delay_timers(self, shift_ms: float) -> None:
        """Move the window and commit timers ``shift_ms`` later (after a pause)."""
        self._next_window += shift_ms
        self._next_commit += shift_ms

    # -- timers -----------------------------------------------------------------------------------------
    def _start_timers(self) -> None:
        state = self.state
        if not state.schedule.clock_timers:
            return  # a replay fires window and commit at their recorded positions (recording/replay.py)
        start = state.clock.now_ms()
        if state.settings.window_ms > 0 and any(ti.windowable for ti in state.tasks):
            self._next_window = start + state.settings.window_ms
        if state.settings.commit_ms > 0:
            self._next_commit = start + state.settings.commit_ms

    def _fire_timers(self, now: float) -> None:
        settings = self.state.settings
        schedule = self.state.schedule  # record/replay (loop/hooks.py): replays fire their own timers
        schedule.tick()
        if now >= self._next_window:
            period = settings.window_ms
            self._next_window += period * (math.floor((now - self._next_window) / period) + 1)
            for ti in self.state.tasks:
                if ti.windowable:
                    ti.request_window()
        if now >= self._next_commit:
            period = settings.commit_ms
            self._next_commit += period * (math.floor((now - self._next_commit) / period) + 1)
            for ti in self.state.tasks:
                if not ti.commit_in_flight:  # a commit slower than the period must not starve messages
                    ti.request_commit()
            schedule.commit_timer_fired()

    def _check_timeouts(self, now: float) -> None:
        heap = self.state.deadlines
        while heap and heap[0][2].is_done:
            heapq.heappop(heap)
        if heap and heap[0][0] <= now:
            _, _, callback = heapq.heappop(heap)
            callback.failure(
                TimeoutError(
                    f"callback of task {callback.task_name!r} for {callback.ssp} offset {callback.offset} "
                    f"timed out after {self.state.settings.callback_timeout_ms} ms"
                )
            )
            self.state.drain_completions()

    async def _drain_and_commit(self) -> None:
        """Graceful end: let in-flight work finish (up to task.shutdown.ms), then commit every task."""
        state = self.state
        state.consumers.stop_fetching()
        clock = state.clock
        deadline = clock.now_ms() + state.settings.shutdown_ms
        while state.failure is None:
            state.wakeup.clear()
            if state.completions:
                state.drain_completions()
            if state.deadlines:
                self._check_timeouts(clock.now_ms())
            busy = [ti for ti in state.tasks if ti.in_flight or ti.commit_in_flight or ti.window_in_flight]
            now = clock.now_ms()
            if not busy or now >= deadline:
                break
            await clock.wait(state.wakeup, deadline - now)
        if state.failure is not None:
            return
        for ti in state.tasks:
            offsets = ti.uncommitted_offsets()
            if offsets is not None:
                try:
                    await state.commit_fn(ti, offsets)
                except Exception as exc:
                    state.fail(ti, None, None, exc, "commit")
                    return
                ti.committed_at_stop(offsets)
                if crash_points.ARMED:
                    crash_points.reached("container.stopping")
