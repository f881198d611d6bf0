"""A container's steering: pause, step, peek, resume, set (live knobs) and swap, safe from any thread.

:class:`ContainerSteering` is an object the container holds (``SamzaContainer.steering``), reaching its
container only through :class:`SteeringHost`.

Each blocking method (``pause``, ``step``, ``swap``) has a coroutine twin (``pause_async``, ...). The plain
one may be called from any thread but the one the job's event loop runs on (it would wait for itself: a
:class:`SamzaError` names the twin to await there); the twin works on any thread. ``resume`` and ``set``
never wait for the job and work everywhere. The loop-side logic is
:mod:`samza_nb.container.steering.loop_steering`.

Before the run loop started: ``pause`` makes the job start paused (``resume`` undoes it), ``set`` changes
the config the job will start with, ``swap`` replaces the task the job will run, ``step`` is refused.
After the job ended every method raises a :class:`SamzaError` saying so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import traceback
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from samza_nb.api.task_factory import TaskKind, task_factory, task_kind
from samza_nb.container import knobs
from samza_nb.container.steering.loop_steering import LoopSteering, NextMessage, Replacement, Steps
from samza_nb.container.steering.tap import StoreTap
from samza_nb.errors import JobTimeoutError, SamzaError
from samza_nb.observe.states import ContainerState

if TYPE_CHECKING:
    from samza_nb.api.task import TaskContext
    from samza_nb.config import Config
    from samza_nb.container.loop.collector import TaskCollector
    from samza_nb.container.loop.run_loop import RunLoop
    from samza_nb.container.loop.task_instance import TaskInstance

T = TypeVar("T")

_ENDED = (ContainerState.STOPPING, ContainerState.STOPPED, ContainerState.FAILED)
_PACKAGE = str(Path(__file__).resolve().parents[1])  # samza_nb/


class SteeringHost(Protocol):
    """What steering needs of the container it steers (:class:`~samza_nb.container.SamzaContainer`)."""

    @property
    def container_id(self) -> str:
        """The container's id (named in errors)."""
        ...

    @property
    def state(self) -> ContainerState:
        """Where the container is in its life."""
        ...

    @property
    def tasks(self) -> Mapping[str, TaskInstance]:
        """The container's task instances by name (filled while it starts)."""
        ...

    config: Config
    """The container's config; before the start, :meth:`ContainerSteering.set` replaces it."""
    task_factory: Callable[[], Any]
    """Builds the tasks; before the start, :meth:`ContainerSteering.swap` replaces it."""

    def collector(self, task_name: str, kind: TaskKind) -> TaskCollector:
        """A new collector for task ``task_name`` running code of ``kind`` (a swap changing the kind)."""
        ...


class ContainerSteering:
    """Pause, step, peek, resume, set and swap of one container (``container.steering``; see the module's
    doc for threads and for calls before the start and after the end)."""

    def __init__(self, host: SteeringHost) -> None:
        self._host = host
        self._control = LoopSteering(self._stores_of)
        self._control_lock = threading.Lock()
        self._event_loop: asyncio.AbstractEventLoop | None = None
        self._bound = threading.Event()  # set once the controls reach the run loop
        self._start_paused = False
        self._start_changes: dict[str, int] = {}
        self._contexts: dict[str, TaskContext] = {}
        self._taps: dict[str, dict[str, StoreTap]] = {}  # each task's stores as its context gives them

    # -- the public methods ------------------------------------------------------------------------------
    def pause(self, timeout: float | None = None) -> None:
        """No new message is dispatched after the current one; in-flight callbacks complete; window and
        commit timers are suspended; every task commits. Returns when the job is quiet (JobTimeoutError
        after ``timeout`` s). Idempotent."""
        self._blocking("pause_async", lambda c: c.pause(timeout), self._pause_before)

    async def pause_async(self, timeout: float | None = None) -> None:
        """:meth:`pause`, awaitable on any thread."""
        await self._awaiting(lambda c: c.pause(timeout), self._pause_before)

    def step(self, n: int = 1, timeout: float | None = None) -> Steps:
        """While paused: process exactly ``n`` messages in the chooser's order, each to its end, and pause
        again; their :class:`~samza_nb.container.steering.steps.Step` records. Fewer at end of stream or
        after ``timeout`` s (:attr:`Steps.stopped_early` says why). A job paused before its run starts:
        the step waits for that start (JobTimeoutError when it does not come within ``timeout``)."""
        wait = (self._start_due("step"), timeout)
        return self._blocking("step_async", lambda c: c.step(n, timeout), self._step_before, wait)

    async def step_async(self, n: int = 1, timeout: float | None = None) -> Steps:
        """:meth:`step`, awaitable on any thread."""
        wait = (self._start_due("step"), timeout)
        return await self._awaiting(lambda c: c.step(n, timeout), self._step_before, wait)

    def peek(self, timeout: float | None = None) -> NextMessage | None:
        """While paused: the message the next step (or the resume) processes first, with the chooser's
        reason; None when nothing is buffered. Peeking changes no order: the chooser's decision is made
        now and kept. A job paused before its run starts: the peek waits for that start. JobTimeoutError
        when the job is not there within ``timeout`` s."""
        wait = (self._start_due("peek"), timeout)
        return self._blocking("peek_async", lambda c: self._timed(c.peek(), timeout), self._peek_before, wait)

    async def peek_async(self, timeout: float | None = None) -> NextMessage | None:
        """:meth:`peek`, awaitable on any thread."""
        wait = (self._start_due("peek"), timeout)
        return await self._awaiting(lambda c: self._timed(c.peek(), timeout), self._peek_before, wait)

    @staticmethod
    async def _timed(command: Coroutine[Any, Any, T], timeout: float | None) -> T:
        try:
            return await asyncio.wait_for(command, timeout)
        except TimeoutError:
            raise JobTimeoutError(f"peek: the job did not answer within {timeout:g} s") from None

    @property
    def paused(self) -> bool:
        """True while a pause is asked for (or, before the start, when the job will start paused): the
        job dispatches no message but the ones :meth:`step` asks for. A :meth:`resume` from another thread
        turns it False once it reached the job's loop (a moment later)."""
        with self._control_lock:
            if self._event_loop is None:
                return self._start_paused
        return self._control.paused and self._host.state not in _ENDED

    def resume(self) -> None:
        """Dispatch again after :meth:`pause` (a no-op when not paused)."""
        with self._control_lock:
            loop = self._event_loop
            if loop is None:
                self._refuse_if_ended()
                self._start_paused = False
                return
        self._refuse_if_ended()
        loop.call_soon_threadsafe(self._control.resume)

    def set(self, changes: Mapping[str, Any] | None = None, **keywords: Any) -> dict[str, str]:
        """Change live knobs (``task.max.concurrency``, ``task.commit.ms``, ``task.window.ms``,
        ``systems.<s>.streams.<t>.samza.priority``, ``task.consumer.batch.size``) at the next message
        boundary; returns the knobs' values in force. Any other key is a ConfigError listing the live
        keys; a bad value one naming key and value. Keywords spell keys with ``_`` for ``.``."""
        parsed = knobs.live_changes(changes, keywords)
        with self._control_lock:
            loop = self._event_loop
            if loop is None:
                return self._set_before(parsed)
        self._refuse_if_ended()
        if _on(loop):
            return self._control.set(parsed)
        future = concurrent.futures.Future[dict[str, str]]()

        def apply() -> None:
            try:
                future.set_result(self._control.set(parsed))
            except BaseException as exc:
                future.set_exception(exc)

        loop.call_soon_threadsafe(apply)
        return future.result()

    def swap(self, task: Any) -> None:
        """Replace the task code, keeping stores, offsets and timers: the job pauses, every task gets a new
        instance of ``task`` (a class, factory or instance) ``init``-ed with its context, the old ones
        close, the job resumes (stays paused if it was). All or nothing: when one fails to build or init,
        every task keeps its old instance and a SamzaError names the task and the failing line."""
        factory = task_factory(task)
        wait = (self._start_due("swap"), None)
        self._blocking("swap_async", self._swap_command(factory), self._swap_before(factory), wait)

    async def swap_async(self, task: Any) -> None:
        """:meth:`swap`, awaitable on any thread."""
        factory = task_factory(task)
        wait = (self._start_due("swap"), None)
        await self._awaiting(self._swap_command(factory), self._swap_before(factory), wait)

    def _swap_command(
        self, factory: Callable[[], Any]
    ) -> Callable[[LoopSteering], Coroutine[Any, Any, None]]:
        return lambda control: control.swap(lambda: self._prepare_swap(factory))

    # -- before the start ---------------------------------------------------------------------------------
    def _pause_before(self) -> None:
        self._start_paused = True

    def _step_before(self) -> Steps:
        raise SamzaError(
            f"{self._who} has not started: step() works on a paused job (pause() before "
            "the run makes it start paused, and a step then waits for the start)"
        )

    def _peek_before(self) -> NextMessage | None:
        raise SamzaError(f"{self._who} has not started: peek() works on a paused job")

    def _swap_before(self, factory: Callable[[], Any]) -> Callable[[], None]:
        def replace() -> None:
            if self._host.state is not ContainerState.NEW:
                raise SamzaError(f"{self._who} is starting: swap once it runs")
            self._host.task_factory = factory

        return replace

    def _set_before(self, parsed: Mapping[str, int]) -> dict[str, str]:
        if self._host.state is ContainerState.NEW:
            self._host.config = self._host.config.with_overrides({k: str(v) for k, v in parsed.items()})
        elif self._host.state in _ENDED:
            raise SamzaError(f"{self._who} has ended ({self._host.state}): nothing to set")
        else:
            self._start_changes.update(parsed)
        pending = {key: str(value) for key, value in self._start_changes.items()}
        return knobs.config_values(self._host.config.with_overrides(pending))

    # -- the container's side ------------------------------------------------------------------------------
    def task_started(self, name: str, context: TaskContext, taps: dict[str, StoreTap]) -> None:
        """Task ``name`` was initialised with ``context``, whose stores are ``taps`` (a step records
        there; a swapped-in instance is initialised with the same context)."""
        self._contexts[name] = context
        self._taps[name] = taps

    def bind(self, run_loop: RunLoop) -> None:
        """The run loop is built (on the event loop that will run it): the controls reach it from now."""
        with self._control_lock:
            self._control.bind(run_loop, self._start_paused, self._start_changes)
            self._event_loop = asyncio.get_running_loop()
        self._bound.set()

    def ended(self, error: BaseException | None) -> None:
        """The run loop returned (or the run failed): waiting commands end."""
        self._control.ended("failed" if error is not None else "ended", error)
        self._bound.set()  # (a command waiting for a start that failed is refused)

    def _stores_of(self, task_name: str) -> Mapping[str, StoreTap]:
        return self._taps.get(task_name, {})

    def _prepare_swap(self, factory: Callable[[], Any]) -> Replacement:
        """Build and init a new instance for every task (on the loop's thread, the job quiet); a
        SamzaError naming the task and the failing line when one fails (the new ones built close)."""
        built: dict[str, tuple[Any, Any]] = {}
        for name, ti in self._host.tasks.items():
            what = "building the task"
            try:
                task = factory()
                kind = task_kind(task)
                what = "init()"
                init = getattr(task, "init", None)
                if callable(init):
                    init(self._contexts[name])
            except Exception as exc:
                for new, _ in built.values():
                    _close_quietly(new)
                raise SamzaError(
                    f"swap refused: task {name!r} failed in {what}{_where(exc)}: {type(exc).__name__}: "
                    f"{exc}; every task keeps its old code and the job goes on"
                ) from exc
            collector: Any = ti.collector if kind is ti.kind else self._host.collector(name, kind)
            built[name] = (task, collector)
        return built

    # -- plumbing ------------------------------------------------------------------------------------------
    @property
    def _who(self) -> str:
        return f"container {self._host.container_id}"

    def _refuse_if_ended(self) -> None:
        if self._host.state in _ENDED:
            raise SamzaError(f"{self._who} has ended ({self._host.state}): it runs no more")

    def _start_due(self, command: str) -> bool:
        """True when ``command`` ("step", "peek", "swap") must wait for the run loop rather than act before
        it: it is being built, or (a step, a peek) the job was paused before its start, so the start is
        coming."""
        if self._host.state is ContainerState.STARTING:
            return True
        return command in ("step", "peek") and self._host.state is ContainerState.NEW and self._start_paused

    def _started(self, ready: bool, timeout: float | None) -> None:
        if not ready:
            raise JobTimeoutError(f"{self._who} did not start within {timeout:g} s")

    def _blocking(
        self,
        twin: str,
        command: Callable[[LoopSteering], Coroutine[Any, Any, T]],
        before: Callable[[], T],
        wait: tuple[bool, float | None] = (False, None),
    ) -> T:
        if wait[0]:
            self._started(self._bound.wait(wait[1]), wait[1])
        with self._control_lock:
            loop = self._event_loop
            if loop is None:
                self._refuse_if_ended()
                return before()
        self._refuse_if_ended()
        if _on(loop):
            raise SamzaError(
                f"{twin.removesuffix('_async')}() was called on the thread of the job's event loop, where it "
                f"would wait for itself: await {twin}() there"
            )
        coroutine = command(self._control)
        try:
            future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        except RuntimeError as exc:  # the loop closed: the job ended
            coroutine.close()
            raise SamzaError(f"{self._who} has ended: it runs no more") from exc
        try:
            return future.result()
        except concurrent.futures.CancelledError as exc:
            raise SamzaError(f"{self._who} ended before {twin} finished") from exc

    async def _awaiting(
        self,
        command: Callable[[LoopSteering], Coroutine[Any, Any, T]],
        before: Callable[[], T],
        wait: tuple[bool, float | None] = (False, None),
    ) -> T:
        if wait[0]:
            self._started(await asyncio.to_thread(self._bound.wait, wait[1]), wait[1])
        with self._control_lock:
            loop = self._event_loop
            if loop is None:
                self._refuse_if_ended()
                return before()
        self._refuse_if_ended()
        if _on(loop):
            return await command(self._control)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(command(self._control), loop))


def _on(loop: asyncio.AbstractEventLoop) -> bool:
    """True on the thread that runs ``loop``."""
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _where(exc: BaseException) -> str:
    """`` at FILE:LINE (source)`` of the last frame of ``exc``'s traceback outside samza_nb (the user's
    code); empty when there is none."""
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not str(Path(frame.filename).resolve()).startswith(_PACKAGE)
    ]
    if not frames:
        return ""
    frame = frames[-1]
    source = f" ({frame.line.strip()})" if frame.line else ""
    return f" at {frame.filename}:{frame.lineno}{source}"


def _close_quietly(task: Any) -> None:
    close = getattr(task, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):
            close()
