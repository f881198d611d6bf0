"""Steering a running loop: pause, step, resume, live knobs and hot swap (docs/architecture.md §3).

:class:`LoopSteering` runs on the loop's thread. Its coroutines (``pause``, ``step``, ``swap``) and plain
methods (``resume``, ``set``) are called there: code on the loop's thread runs while the run loop awaits,
which it only does between two messages, so every change lands at a message boundary. While a pause,
step or swap is asked for or under way the run loop holds the control (:meth:`RunLoop.steer_with`; it is a
:class:`~samza_nb.container.loop.hooks.Steering`) and hands it the turn (:meth:`LoopSteering.steer`) instead
of dispatching: the one check the loop pays per slice. The control acts on the loop through its methods
only (settle, start due operations, step one message, delay timers).

A pause lets in-flight callbacks complete and the operations already due run (window, end-of-stream),
commits every task (so the stores' SQL shows the paused state), then waits for the next command with the
window and commit timers suspended (they resume shifted by the pause's length). A step takes envelopes
one at a time on the general path, in the order the chooser picks them (parked ones first, as the loop
does), waits for each to complete and records it (:mod:`samza_nb.container.steering.steps`). A swap is a
pause, the new task instances put in (all or none), and the job resumes (unless it was paused).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.container import knobs
from samza_nb.container.loop.task_ops import Op
from samza_nb.container.steering.steps import NextMessage, Step, Steps, choice_reason
from samza_nb.container.steering.tap import StepCapture, StoreTap
from samza_nb.errors import JobTimeoutError, SamzaError

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope
    from samza_nb.api.task import MessageCollector
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.run_loop import RunLoop
    from samza_nb.container.loop.task_instance import TaskInstance

__all__ = ["LoopSteering", "NextMessage", "Step", "Steps"]

log = logging.getLogger(__name__)

Replacement = Mapping[str, tuple[Any, "MessageCollector"]]
"""A swap's new task instances (initialised) and their collectors, by task name."""


@dataclass
class _StepCommand:
    requested: int
    future: asyncio.Future[Steps]
    taken: list[Step] = field(default_factory=list)
    cancelled: bool = False


@dataclass
class _PeekCommand:
    future: asyncio.Future[NextMessage | None]


@dataclass
class _SwapCommand:
    prepare: Callable[[], Replacement]
    future: asyncio.Future[None]


class LoopSteering:
    """Pause, step, resume, live knobs and swap of one run loop (see the module's doc). ``stores_of`` gives
    a task's stores by name, each the :class:`StoreTap` the task was given (recorded during steps)."""

    def __init__(self, stores_of: Callable[[str], Mapping[str, StoreTap]]) -> None:
        self._stores_of = stores_of
        self._run_loop: RunLoop | None = None
        self._want_pause = False
        self._commands: deque[_StepCommand | _PeekCommand | _SwapCommand] = deque()
        self._peeked: tuple[IncomingMessageEnvelope, str] | None = None  # chosen by a peek, parked
        self._quiet = asyncio.Event()
        self._ended: str | None = None

    # -- binding to a loop -------------------------------------------------------------------------------
    def bind(self, run_loop: RunLoop, paused: bool, changes: Mapping[str, int]) -> None:
        """The loop that is about to run: it starts paused when ``paused``, with ``changes`` applied."""
        self._run_loop = run_loop
        if changes:
            knobs.apply(run_loop, changes)
        self._want_pause = paused
        if paused:
            run_loop.steer_with(self)

    def ended(self, why: str, failure: BaseException | None) -> None:
        """The run ended: waiting commands end too (a step returns what it took, a swap fails)."""
        self._ended = why
        self._quiet.set()
        while self._commands:
            command = self._commands.popleft()
            if command.future.done():
                continue
            if isinstance(command, _PeekCommand):
                command.future.set_result(None)
            elif isinstance(command, _StepCommand):
                if failure is not None:
                    command.future.set_exception(failure)
                else:
                    command.future.set_result(Steps(command.requested, command.taken, "the job stopped"))
            else:
                command.future.set_exception(SamzaError(f"swap not done: the job {why}"))

    @property
    def paused(self) -> bool:
        """True while a pause is asked for (the job is quiet, or becoming so)."""
        return self._want_pause

    # -- commands (on the loop's thread) -----------------------------------------------------------------
    async def pause(self, timeout: float | None = None) -> None:
        """No new message after the current one; returns once in-flight work completed and every task
        committed. Idempotent. :class:`JobTimeoutError` after ``timeout`` s (the pause stays asked)."""
        state = self._state()
        self._want_pause = True
        self._attach()
        try:
            await asyncio.wait_for(self._quiet.wait(), timeout)
        except TimeoutError:
            busy = sum(ti.in_flight for ti in state.tasks)
            raise JobTimeoutError(
                f"the job was not quiet within {timeout:g} s ({busy} messages in flight); it pauses once "
                "they complete"
            ) from None

    def resume(self) -> None:
        """Dispatch again (a no-op when not paused); waiting steps and swaps run first."""
        self._want_pause = False
        if self._run_loop is not None:
            self._run_loop.state.wakeup.set()

    async def step(self, n: int = 1, timeout: float | None = None) -> Steps:
        """Process exactly ``n`` messages while paused, one at a time, and pause again (see the module's
        doc). Fewer at end of stream, on ``timeout`` or when the job stops: :attr:`Steps.stopped_early`."""
        self._state()
        if not self._want_pause:
            raise SamzaError("step() needs a paused job: call pause() first")
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise SamzaError(f"step(n): n must be an integer >= 0, got {n!r}")
        loop = asyncio.get_running_loop()
        command = _StepCommand(n, loop.create_future())
        self._commands.append(command)
        self._attach()
        try:
            return await asyncio.wait_for(asyncio.shield(command.future), timeout)
        except TimeoutError:
            command.cancelled = True  # the message under way completes; no further one starts
            log.info("step(%d) timed out after %d steps", n, len(command.taken))
            return Steps(n, command.taken, "timeout")

    async def peek(self) -> NextMessage | None:
        """While paused: the message the next step (or the resume) processes first, and why the chooser
        picked it; None when nothing is buffered. The chooser decides now (the envelope waits, parked on
        its task, as one chosen while the task was busy does), so peeking twice shows the same message."""
        self._state()
        if not self._want_pause:
            raise SamzaError("peek() needs a paused job: call pause() first")
        command = _PeekCommand(asyncio.get_running_loop().create_future())
        self._commands.append(command)
        self._attach()
        return await command.future

    async def swap(self, prepare: Callable[[], Replacement]) -> None:
        """Pause, put in the task instances ``prepare()`` builds (it raises to refuse: nothing changes),
        close the old ones, and resume unless the job was paused."""
        self._state()
        command = _SwapCommand(prepare, asyncio.get_running_loop().create_future())
        self._commands.append(command)
        self._attach()
        await command.future

    def set(self, changes: Mapping[str, int]) -> dict[str, str]:
        """Apply checked live ``changes`` now (between two messages); the knobs' values in force."""
        run_loop = self._run_loop
        assert run_loop is not None
        knobs.check_against(changes, run_loop.state.consumers.chooser, _inputs(run_loop.state))
        knobs.apply(run_loop, changes)
        return knobs.values(run_loop)

    def values(self) -> dict[str, str]:
        """The live knobs' values in force."""
        assert self._run_loop is not None
        return knobs.values(self._run_loop)

    def _state(self) -> LoopState:
        if self._ended is not None:
            raise SamzaError(f"the job {self._ended}: it cannot be paused, stepped or swapped any more")
        assert self._run_loop is not None
        return self._run_loop.state

    def _attach(self) -> None:
        assert self._run_loop is not None
        self._run_loop.steer_with(self)

    # -- the run loop's turn -----------------------------------------------------------------------------
    async def steer(self) -> None:
        """Hold the loop while paused, stepping or swapping; return to let it run (or stop)."""
        loop = self._run_loop
        assert loop is not None
        state = loop.state
        if not self._want_pause and not self._commands:
            return
        clock = state.clock
        if not await self._settle(loop, commit=True):
            return  # stopping: the loop's own stop path takes over
        paused_at = clock.now_ms()
        self._quiet.set()
        try:
            while self._want_pause or self._commands:
                if self._stopping(state):
                    return
                if self._commands:
                    command = self._commands.popleft()
                    if isinstance(command, _StepCommand):
                        await self._run_steps(loop, command)
                    elif isinstance(command, _PeekCommand):
                        self._run_peek(state, command)
                    else:
                        self._run_swap(state, command)
                    continue
                state.wakeup.clear()
                loop.settle()
                await clock.wait(state.wakeup, None)
        finally:
            self._quiet.clear()
            loop.delay_timers(clock.now_ms() - paused_at)

    def _stopping(self, state: LoopState) -> bool:
        return (
            state.failure is not None
            or state.stop_requested
            or state.requests.shutdown_now
            or state.consumers.failure is not None
            or all(ti.done for ti in state.tasks)
        )

    async def _settle(self, loop: RunLoop, commit: bool) -> bool:
        """Wait until nothing is in flight and no operation is due; with ``commit``, every task commits
        once its messages completed. False when the job stops or fails meanwhile."""
        state = loop.state
        tasks = state.tasks
        to_commit = commit
        while True:
            state.wakeup.clear()
            loop.settle()
            if self._stopping(state):
                return False
            if to_commit and not any(ti.in_flight or ti.window_in_flight for ti in tasks):
                for ti in tasks:
                    ti.request_commit()  # (a done task ignores it)
                to_commit = False
            started = waiting = False
            for ti in tasks:
                if not ti.done:
                    op = loop.start_due(ti)
                    started = started or op.started
                    waiting = waiting or op is Op.NO_OP
            if started:
                continue
            busy = any(ti.in_flight or ti.window_in_flight or ti.commit_in_flight for ti in tasks)
            if not busy and not waiting and not to_commit:
                return True
            await state.clock.wait(state.wakeup, _timeout_wait(state))

    async def _run_steps(self, loop: RunLoop, command: _StepCommand) -> None:
        why: str | None = None
        while len(command.taken) < command.requested and why is None:
            outcome = await self._step_one(loop, command)
            if isinstance(outcome, Step):
                command.taken.append(outcome)
            else:
                why = outcome
        state = loop.state
        if why is not None:
            log.info("step(%d) took %d: %s", command.requested, len(command.taken), why)
        if command.taken and state.failure is None:
            await self._settle(loop, commit=True)  # the stores' SQL shows the state after the steps
        if state.failure is not None and not command.future.done():
            command.future.set_exception(state.failure)
            return
        if not command.future.done():
            command.future.set_result(Steps(command.requested, command.taken, why))

    async def _step_one(self, loop: RunLoop, command: _StepCommand) -> Step | str:
        """One message, or why none: "end of stream", "timeout", "the job stopped"."""
        state = loop.state
        while True:
            if command.cancelled:
                return "timeout"
            if self._stopping(state):
                return "end of stream" if _all_ended(state) else "the job stopped"
            picked = self._next(state)
            if picked is None:
                if _all_ended(state):
                    return "end of stream"
                state.wakeup.clear()
                loop.settle()
                await state.clock.wait(state.wakeup, None)  # new input, a stop or a cancelled step
                continue
            ti, envelope, parked, reason = picked
            capture = StepCapture(ti, self._stores_of(ti.name))
            capture.start()
            try:
                started = loop.step_one(ti, None if parked else envelope)
                while started and ti.in_flight and not self._stopping(state):
                    state.wakeup.clear()
                    loop.settle()
                    if ti.in_flight:
                        await state.clock.wait(state.wakeup, _timeout_wait(state))
                loop.settle()
            finally:
                capture.stop()
            settled = await self._settle(loop, commit=False)
            if started and state.failure is None:
                return Step(
                    ti.name,
                    envelope.ssp,
                    envelope.offset,
                    envelope.key,
                    envelope.message,
                    reason,
                    capture.outputs,
                    capture.writes,
                )
            if not settled:
                continue  # the checks at the top say why

    def _next(self, state: LoopState) -> tuple[TaskInstance, IncomingMessageEnvelope, bool, str] | None:
        """The next envelope as the loop would take it: a parked one first, else the chooser's pick."""
        peeked, self._peeked = self._peeked, None
        for ti in state.tasks:
            if ti.pending and ti.open:
                parked = ti.pending[0]
                if peeked is not None and peeked[0] is parked:
                    return ti, parked, True, peeked[1]
                why = f"chosen before the pause; parked while task {ti.name} was busy"
                return ti, parked, True, why
        chooser = state.consumers.chooser
        envelope = chooser.choose()
        if envelope is None:
            return None
        return state.route[envelope.ssp], envelope, False, choice_reason(chooser, envelope)

    def _run_peek(self, state: LoopState, command: _PeekCommand) -> None:
        picked = self._next(state)
        if picked is None:
            command.future.set_result(None)
            return
        ti, envelope, parked, reason = picked
        if not parked:
            ti.park(envelope)  # its partition is not refilled until it runs; a step or resume starts it first
        self._peeked = (envelope, reason)
        ended = envelope.offset == END_OF_STREAM_OFFSET
        key, message = (None, None) if ended else (envelope.key, envelope.message)
        command.future.set_result(NextMessage(ti.name, envelope.ssp, envelope.offset, key, message, reason))

    def _run_swap(self, state: LoopState, command: _SwapCommand) -> None:
        try:
            replacement = command.prepare()
        except BaseException as exc:
            command.future.set_exception(exc)
            return
        old = []
        for ti in state.tasks:
            task, collector = replacement[ti.name]
            old.append((ti.name, ti.task))
            ti.install(task, collector)
        for name, task in old:
            close = getattr(task, "close", None)
            if callable(close):
                try:
                    close()
                except Exception as exc:
                    log.warning("swap: the old instance of task %r failed in close(): %r", name, exc)
        command.future.set_result(None)


def _all_ended(state: LoopState) -> bool:
    return all(ti.end_of_stream or ti.done for ti in state.tasks)


def _timeout_wait(state: LoopState) -> float | None:
    """How long the loop may sleep before the next callback deadline (None: no deadline)."""
    if not state.deadlines:
        return None
    return max(state.deadlines[0][0] - state.clock.now_ms(), 0.0)


def _inputs(state: LoopState) -> set[Any]:
    return {ssp.system_stream for ssp in state.route}
