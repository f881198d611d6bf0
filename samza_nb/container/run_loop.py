"""The run loop: Samza's event loop on asyncio (DESIGN §4).

It chooses messages, hands them to their tasks, runs window and commit on timers and requests, releases
completions in sequence order (the low watermark), and stops on request, on end-of-stream or on failure.
Synchronous tasks run inline in tight slices; the loop yields to asyncio between slices and sleeps (never
spins) when nothing can progress. The parts: :mod:`loop_state` (shared state and bookkeeping),
:mod:`task_ops` (commit, window, end-of-stream), :mod:`pump` (messages).
"""

from __future__ import annotations

import asyncio
import heapq
import math
import threading
import time

from samza_nb.container.loop_state import CommitFn, RunLoopSettings
from samza_nb.container.pump import MessagePump
from samza_nb.container.task_ops import TaskOperations

__all__ = ["CommitFn", "RunLoop", "RunLoopSettings"]


class RunLoop(MessagePump, TaskOperations):
    """Runs the tasks of one container until they are done, a stop is requested, or one fails."""

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
