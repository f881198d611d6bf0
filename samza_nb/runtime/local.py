"""LocalJobRunner: runs a job as one container in this process, on the current (or a new) event loop."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from samza_nb.checkpoint.base import load_checkpoint_manager
from samza_nb.container.container import SamzaContainer
from samza_nb.container.knobs import config_values, live_changes
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.errors import ConfigError, JobTimeoutError, SamzaError
from samza_nb.runtime.applications import (
    TASK_CLASS_KEY,
    JobProgram,
    is_application,
    load_task_factory,
    what_job_runs,
)
from samza_nb.runtime.config_check import check_job_config

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Iterable, Mapping

    from samza_nb.api.job_model import JobModel
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.container.steering.steps import NextMessage, Steps
    from samza_nb.observe.bus import EventBus


async def read_checkpoints(
    config: Config, tasks: Iterable[str]
) -> dict[str, dict[SystemStreamPartition, str]]:
    """The last checkpointed offsets of each of ``tasks`` (``{}`` for a task without a checkpoint), read from
    the job's checkpoint store."""
    names = sorted(tasks)
    manager = load_checkpoint_manager(config)
    for name in names:
        manager.register(name)
    await manager.start()
    try:
        result: dict[str, dict[SystemStreamPartition, str]] = {}
        for name in names:
            checkpoint = await manager.read_last_checkpoint(name)
            result[name] = dict(checkpoint.offsets) if checkpoint is not None else {}
        return result
    finally:
        await manager.stop()


class LocalJobRunner:
    """One container of the job described by ``config``, run in this process.

    What it runs is decided once, here (:attr:`program`, a
    :class:`~samza_nb.runtime.applications.JobProgram`): ``task`` (a class, a zero-argument factory or an
    instance; or a StreamApplication class or instance), else what the config names (``task.class`` or
    ``app.class``). An application is planned (its intermediate streams created) when the run starts,
    unless the config already carries its plan; it must plan to one job (a split application's jobs run
    with ``samza-nb run``, or one of them with ``app.stage``). The job model is ``job_model`` (a job
    coordinator's) or else planned from the inputs here. ``run_async`` runs on the current event loop,
    ``run`` on a new one; ``stop`` (from any thread) stops gracefully: in-flight messages finish, every
    task commits. ``pause``, ``step``, ``resume``, ``set`` and ``swap`` steer the running job (they are
    the container's:
    :class:`~samza_nb.container.steering.container_steering.ContainerSteering`); before an application's
    container exists, ``pause``/``resume``/``set`` are kept for its start and ``swap`` replaces what runs.

    ``replay`` (a directory ``job.record.path`` recorded a run into) runs the job again from that run's
    starting checkpoint, forcing its schedule: the same messages in the same order, async completions and
    window/commit timers at their recorded positions (see :mod:`samza_nb.container.recording.replay`).

    A config key that looks like a typo of a known one (``task.max.concurency``) is a ConfigError naming
    it and the key it resembles (:func:`~samza_nb.config.check_key_spelling`).
    """

    def __init__(
        self,
        config: Config,
        task: Any = None,
        *,
        bus: EventBus | None = None,
        max_messages: int | None = None,
        job_model: JobModel | None = None,
        replay: str | os.PathLike[str] | None = None,
    ) -> None:
        check_job_config(config)  # a misspelt key, class path or serde name: an error before anything runs
        if config.get_int("job.container.count", 1) != 1:
            raise ConfigError(
                "job.container.count must be 1 for a run in this process (it runs one container with every "
                "task); samza-nb run starts a job coordinator and job.container.count container processes",
                key="job.container.count",
            )
        self._bus = bus
        self._max_messages = max_messages
        self._job_model = job_model
        self._replay = replay
        self._stop_requested = False
        self._start_paused = False
        self._start_changes: dict[str, str] = {}
        self.container: SamzaContainer | None = None
        self.program = what_job_runs(config) if task is None else JobProgram.of(task)
        """What the job runs (decided once)."""
        if self.program.needs_planning:
            self.config = config.validate()
        else:
            self._start_container(config, self.program.task_factory())

    def _start_container(self, config: Config, factory: Callable[[], Any]) -> SamzaContainer:
        if self._job_model is not None:
            container = SamzaContainer(
                config,
                factory,
                job_model=self._job_model,
                bus=self._bus,
                max_messages=self._max_messages,
                replay=self._replay,
            )
        else:
            container = SamzaContainer(
                config,
                factory,
                planner=plan_job_model,
                bus=self._bus,
                max_messages=self._max_messages,
                replay=self._replay,
            )
        self.container = container
        self.config = container.config
        if self._stop_requested:
            container.shutdown()
        if self._start_changes:
            container.steering.set(self._start_changes)
        if self._start_paused:
            container.steering.pause()
        return container

    async def _prepared_container(self) -> SamzaContainer:
        """The container; for an application not planned yet, plan it first."""
        if self.container is not None:
            return self.container
        prepared = await self.program.plan(self.config)
        if len(prepared.jobs) != 1:
            raise ConfigError(
                f"app.split.jobs: the application runs as {len(prepared.jobs)} jobs, and LocalJobRunner runs "
                "one: run them with samza-nb run, or one of them with app.stage = N",
                key="app.split.jobs",
            )
        return self._start_container(prepared.jobs[0], prepared.task_factory)

    @property
    def name(self) -> str:
        """The job's name (``job.name``)."""
        return self.config.job_name()

    @property
    def bus(self) -> EventBus | None:
        """The container's event bus (None for an application until its run planned it)."""
        return self.container.bus if self.container is not None else self._bus

    @property
    def job_model(self) -> JobModel | None:
        """The job model the container runs (None until it got to its tasks)."""
        return self.container.job_model if self.container is not None else None

    @property
    def processed(self) -> int:
        """Messages processed so far."""
        return self.container.processed if self.container is not None else 0

    def stop(self) -> None:
        """Stop gracefully (commits); safe from any thread, also before the run started."""
        self._stop_requested = True
        if self.container is not None:
            self.container.shutdown()

    # -- steering (see SamzaContainer's ContainerSteering) -------------------------------------------------
    def pause(self, timeout: float | None = None) -> None:
        """Pause the job (see :meth:`ContainerSteering.pause`); before the run: it starts paused."""
        if self.container is None:
            self._start_paused = True
            return
        self.container.steering.pause(timeout)

    async def pause_async(self, timeout: float | None = None) -> None:
        """:meth:`pause`, awaitable on any thread."""
        if self.container is None:
            self._start_paused = True
            return
        await self.container.steering.pause_async(timeout)

    def step(self, n: int = 1, timeout: float | None = None) -> Steps:
        """While paused, process exactly ``n`` messages (see :meth:`ContainerSteering.step`)."""
        return self._running("step").steering.step(n, timeout)

    async def step_async(self, n: int = 1, timeout: float | None = None) -> Steps:
        """:meth:`step`, awaitable on any thread."""
        return await self._running("step").steering.step_async(n, timeout)

    def resume(self) -> None:
        """Dispatch again after :meth:`pause`."""
        if self.container is None:
            self._start_paused = False
            return
        self.container.steering.resume()

    def set(self, changes: Mapping[str, Any] | None = None, **keywords: Any) -> dict[str, str]:
        """Change live knobs (see :meth:`ContainerSteering.set`); the knobs' values in force."""
        if self.container is None:
            parsed = live_changes(changes, keywords)
            self._start_changes.update({key: str(value) for key, value in parsed.items()})
            return config_values(self.config.with_overrides(self._start_changes))
        return self.container.steering.set(changes, **keywords)

    def swap(self, task: Any) -> None:
        """Replace the task code keeping stores, offsets and timers (see :meth:`ContainerSteering.swap`);
        before the run: the task the job will run. A job running an application swaps in another
        application whose graph keeps its shape (op ids, wiring, streams: else a SamzaError listing what
        differs, and nothing changes)."""
        if self.container is None:
            self._refuse_kind_change(task)
            self.program = JobProgram.of(task)
            return
        self.container.steering.swap(self._swapped_in(task))
        self.program = JobProgram.of(task)

    async def swap_async(self, task: Any) -> None:
        """:meth:`swap`, awaitable on any thread."""
        if self.container is None:
            self._refuse_kind_change(task)
            self.program = JobProgram.of(task)
            return
        await self.container.steering.swap_async(self._swapped_in(task))
        self.program = JobProgram.of(task)

    def peek(self, timeout: float | None = None) -> NextMessage | None:
        """While paused: the message processed next and why (see :meth:`ContainerSteering.peek`)."""
        return self._running("peek").steering.peek(timeout)

    async def peek_async(self, timeout: float | None = None) -> NextMessage | None:
        """:meth:`peek`, awaitable on any thread."""
        return await self._running("peek").steering.peek_async(timeout)

    def _swapped_in(self, task: Any) -> Any:
        """What the running container swaps in for ``task``: the task itself, or for an application the
        operator task of a graph of the same shape."""
        self._refuse_kind_change(task)
        if not self.program.runs_application:
            return task
        assert self.container is not None
        from samza_nb.operators.swap_shape import swap_task_factory

        return swap_task_factory(self.program.application, task, self.container.config)

    def _running(self, what: str) -> SamzaContainer:
        if self.container is None:
            raise SamzaError(f"job {self.name!r} has not started: {what}() works on a running, paused job")
        return self.container

    def _refuse_kind_change(self, task: Any) -> None:
        if is_application(task) != self.program.runs_application:
            running = "a StreamApplication" if self.program.runs_application else "a task"
            given = "a StreamApplication" if is_application(task) else "a task"
            raise SamzaError(
                f"swap replaces like with like: the job runs {running} and {task!r} is {given}; stop the "
                "job and run the new one"
            )

    async def _run_container(self) -> None:
        container = await self._prepared_container()
        await container.run()

    async def run_async(self, timeout: float | None = None) -> None:
        """Run until the job is done, stopped or failed. After ``timeout`` seconds the job is stopped
        gracefully and :class:`JobTimeoutError` is raised. Cancelling this cancels the container."""
        run = asyncio.ensure_future(self._run_container())
        try:
            done, _ = await asyncio.wait({run}, timeout=timeout)
        except asyncio.CancelledError:
            run.cancel()
            await asyncio.wait({run})
            if not run.cancelled():
                run.exception()  # retrieved: the cancellation is what the caller sees
            raise
        if run in done:
            run.result()
            return
        self.stop()
        await run
        raise JobTimeoutError(
            f"job did not finish within {timeout:g} s; stopped it after {self.processed} messages"
        )

    async def read_checkpoints(self) -> dict[str, dict[SystemStreamPartition, str]]:
        """The last checkpoint of each task of the job (``{}`` for a task without one), read back from
        the job's checkpoint store; call it after the run. Empty when the run never got to its tasks."""
        model = self.job_model
        if model is None:
            return {}
        return await read_checkpoints(self.config, model.tasks)

    def run(self, timeout: float | None = None) -> None:
        """Run on a new event loop (see :meth:`run_async`); not from inside a running loop."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(self.run_async(timeout))
            return
        raise SamzaError("LocalJobRunner.run() cannot be called in a running event loop: await run_async()")


__all__ = ["TASK_CLASS_KEY", "LocalJobRunner", "load_task_factory", "read_checkpoints"]
