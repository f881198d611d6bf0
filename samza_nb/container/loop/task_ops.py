"""The run loop's per-task operations besides messages: commit, window and end-of-stream, in Samza's
order of precedence (commit > window > end-of-stream > messages)."""

from __future__ import annotations

import enum
import functools
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from samza_nb import crash_points
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    import asyncio

    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.task_instance import TaskInstance


class Op(enum.Enum):
    """What :meth:`TaskOperations.start_due` did for a task (Samza's ``WorkerOp``)."""

    COMMIT = "commit"  # a commit started
    WINDOW = "window"  # a window call started
    END_OF_STREAM = "end-of-stream"  # on_end_of_stream ran (the final commit follows)
    NO_OP = "no-op"  # an operation is due but waits for in-flight work: no message may start
    PROCESS = "process"  # nothing is due: messages may flow

    @property
    def started(self) -> bool:
        """Whether an operation started."""
        return self in _STARTED


_STARTED = frozenset({Op.COMMIT, Op.WINDOW, Op.END_OF_STREAM})


class TaskOperations:
    """Commit, window and end-of-stream of each task; never overlapping its messages or each other."""

    def __init__(self, state: LoopState) -> None:
        self._state = state

    def start_due(self, ti: TaskInstance) -> Op:
        """Start the task's most urgent due operation if it can start now (commit > window >
        end-of-stream); returns which started, or :attr:`Op.NO_OP` when one is due but waits (for
        in-flight work), or :attr:`Op.PROCESS` when none is due (messages may flow)."""
        busy = ti.window_in_flight or ti.commit_in_flight
        if ti.need_commit:
            if not busy and (ti.in_flight == 0 or self._state.settings.async_commit):
                self._start_commit(ti)
                return Op.COMMIT
            return Op.NO_OP
        if ti.need_window:
            if not busy and ti.in_flight == 0:
                self._start_window(ti)
                return Op.WINDOW
            return Op.NO_OP
        if ti.end_of_stream and not ti.eos_ran and not ti.pending:
            # record/replay (loop/hooks.py): a replay holds it until its record
            if not busy and ti.in_flight == 0 and self._state.schedule.task_ending(ti):
                self._run_end_of_stream(ti)
                return Op.END_OF_STREAM
            return Op.NO_OP
        return Op.PROCESS

    def _start_commit(self, ti: TaskInstance) -> None:
        offsets = ti.start_commit()
        loop = self._state.loop
        assert loop is not None
        task = loop.create_task(self._state.commit_fn(ti, offsets), name=f"commit-{ti.name}")
        task.add_done_callback(functools.partial(self._on_commit_done, ti, offsets))

    def _on_commit_done(
        self, ti: TaskInstance, offsets: dict[SystemStreamPartition, str], task: asyncio.Task[None]
    ) -> None:
        state = self._state
        state.wakeup.set()
        if task.cancelled():
            ti.commit_finished(None)
            return
        error = task.exception()
        if error is not None:
            ti.commit_finished(None)
            state.fail(ti, None, None, error, "commit")
            return
        if ti.commit_finished(offsets):
            if crash_points.ARMED:
                crash_points.reached("container.stopping")
            state.requests.vote_shutdown(ti.name)
        state.release(ti, ti.callbacks.release_more())

    def _start_window(self, ti: TaskInstance) -> None:
        ti.start_window()
        coordinator = ReadableCoordinator(ti.name)
        window = ti.task.window
        state = self._state
        if state.executor is None:
            try:
                window(ti.collector, coordinator)
            except Exception as exc:
                state.fail(ti, None, None, exc, "window")
                return
            self._after_window(ti, coordinator, None)
        else:
            future = state.executor.submit(window, ti.collector, coordinator)
            loop = state.loop
            assert loop is not None
            future.add_done_callback(
                lambda f: loop.call_soon_threadsafe(self._after_window, ti, coordinator, f)
            )

    def _after_window(
        self, ti: TaskInstance, coordinator: ReadableCoordinator, future: Future[Any] | None
    ) -> None:
        state = self._state
        ti.window_finished()
        state.wakeup.set()
        if future is not None:
            error = future.exception()
            if error is not None:
                state.fail(ti, None, None, error, "window")
                return
        if crash_points.ARMED:
            crash_points.reached("task.window-done")
        if state.bus.active:
            state.bus.publish(ev.WindowFired(state.clock.now_ms(), ti.name))
        state.apply_requests(coordinator)

    def _run_end_of_stream(self, ti: TaskInstance) -> None:
        state = self._state
        ti.start_end_of_stream()  # the final commit follows; the task is done once it ran
        coordinator = ReadableCoordinator(ti.name)
        if ti.has_end_of_stream_listener:
            try:
                ti.task.on_end_of_stream(ti.collector, coordinator)
            except Exception as exc:
                state.fail(ti, None, None, exc, "on_end_of_stream")
                return
        if crash_points.ARMED:
            crash_points.reached("task.end-of-stream-done")
        if state.bus.active:
            state.bus.publish(ev.EndOfStreamReached(state.clock.now_ms(), ti.name, None, True))
        state.apply_requests(coordinator)
