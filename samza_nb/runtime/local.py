"""LocalJobRunner: runs a job as one container in this process, on the current (or a new) event loop."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TYPE_CHECKING, Any

from samza_nb.api.task_factory import task_factory
from samza_nb.checkpoint.base import load_checkpoint_manager
from samza_nb.config.plugins import import_dotted
from samza_nb.container.container import SamzaContainer
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.errors import ConfigError, JobTimeoutError, SamzaError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.coordinator.job_model import JobModel
    from samza_nb.observe.bus import EventBus

TASK_CLASS_KEY = "task.class"


def load_task_factory(config: Config) -> Callable[[], Any]:
    """The zero-argument task factory named by ``task.class``, imported with the working directory on
    ``sys.path``. A missing key or a path that cannot be imported is a ConfigError naming ``task.class``."""
    path = config.require(TASK_CLASS_KEY, "the dotted path of the task class, e.g. mypackage.tasks.MyTask")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    target = import_dotted(path, TASK_CLASS_KEY)
    try:
        return task_factory(target)
    except SamzaError as exc:
        raise ConfigError(f"{TASK_CLASS_KEY}={path!r}: {exc}", key=TASK_CLASS_KEY) from None


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

    The task comes from ``task`` (a class, a zero-argument factory or an instance) or else from
    ``task.class``. The job model is ``job_model`` (a job coordinator's) or else planned from the inputs
    here. ``run_async`` runs on the current event loop, ``run`` on a new one; ``stop`` (from any thread)
    stops gracefully: in-flight messages finish, every task commits.
    """

    def __init__(
        self,
        config: Config,
        task: Any = None,
        *,
        bus: EventBus | None = None,
        max_messages: int | None = None,
        job_model: JobModel | None = None,
    ) -> None:
        if config.get_int("job.container.count", 1) != 1:
            raise ConfigError(
                "job.container.count must be 1 for a run in this process (it runs one container with every "
                "task); samza-nb run starts a job coordinator and job.container.count container processes",
                key="job.container.count",
            )
        factory = load_task_factory(config) if task is None else task_factory(task)
        if job_model is not None:
            self.container = SamzaContainer(
                config, factory, job_model=job_model, bus=bus, max_messages=max_messages
            )
        else:
            self.container = SamzaContainer(
                config, factory, planner=plan_job_model, bus=bus, max_messages=max_messages
            )
        self.config = self.container.config
        self.bus = self.container.bus

    @property
    def processed(self) -> int:
        """Messages processed so far."""
        return self.container.processed

    def stop(self) -> None:
        """Stop gracefully (commits); safe from any thread, also before the run started."""
        self.container.shutdown()

    async def run_async(self, timeout: float | None = None) -> None:
        """Run until the job is done, stopped or failed. After ``timeout`` seconds the job is stopped
        gracefully and :class:`JobTimeoutError` is raised. Cancelling this cancels the container."""
        run = asyncio.ensure_future(self.container.run())
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
        self.container.shutdown()
        await run
        raise JobTimeoutError(
            f"job did not finish within {timeout:g} s; stopped it after {self.processed} messages"
        )

    async def read_checkpoints(self) -> dict[str, dict[SystemStreamPartition, str]]:
        """The last checkpoint of each task of the job (``{}`` for a task without one), read back from
        the job's checkpoint store; call it after the run. Empty when the run never got to its tasks."""
        model = self.container.job_model
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
