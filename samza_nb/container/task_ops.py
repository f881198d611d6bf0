"""The run loop's per-task operations besides messages: commit, window and end-of-stream, in Samza's
order of precedence (DESIGN §4.2), and starting parked messages once a task is free again."""

from __future__ import annotations

import functools
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from samza_nb.container.coordination import ReadableCoordinator
from samza_nb.container.loop_state import LoopState
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    import asyncio

    from samza_nb.container.task_instance import TaskInstance


class TaskOperations(LoopState):
    """Commit, window and end-of-stream of each task; never overlapping its messages or each other."""

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
