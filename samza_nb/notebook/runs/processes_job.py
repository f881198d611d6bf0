"""A notebook job of several containers (``job.container.count`` > 1): a job coordinator on the job's loop
in the kernel and one ``python -m samza_nb container`` process per container.

Such a job reads inputs that several processes can share (the durable log, Kafka, files): an in-memory
stream lives in the kernel only, so :func:`prepare` refuses it before anything starts. The task is
``task.class``, or the ``%%samza_task`` cell written as a module (:mod:`..magics.task_module`) that the
processes import. Checkpoints go where the runtime puts them for several containers (the durable log, unless
``task.checkpoint.factory`` says otherwise). A container that fails stops the others gracefully and the
run fails with one line naming it.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque

from samza_nb.api.job_model import JobModel
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.container.inputs import input_streams
from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.coordinator.status import JobStatus
from samza_nb.errors import SamzaError, TaskFailedError
from samza_nb.notebook.display.containers_monitor import containers_starting
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.magics.cell_config import CONTAINER_COUNT_KEY, container_count
from samza_nb.notebook.magics.task_cell import TaskDefinition
from samza_nb.notebook.magics.task_module import (
    SELF_CONTAINED,
    task_directory,
    undefined_names,
    write_task_module,
)
from samza_nb.operators.plan import APP_CLASS_KEY
from samza_nb.runtime.processes import ContainerProcesses
from samza_nb.runtime.steering import CoordinatorSteering, SteeringOf
from samza_nb.systems.base import InProcessSystemFactory
from samza_nb.systems.registry import system_factory

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.1
"""How often the run checks its processes (exits, ``--max-messages``)."""
_IMPORT_ERRORS = ("NameError", "ImportError", "ModuleNotFoundError")


class ContainerFailedError(SamzaError):
    """A container process of the job failed; the message names it and says why. When a task failed on a
    message, it is raised from a TaskFailedError naming that message (what the container reported)."""


def prepare(config: Config, task: TaskDefinition | None, max_messages: int | None = None) -> ProcessesJob:
    """The job of several containers for ``config`` with the notebook's ``task`` (else ``task.class``):
    refuses in-memory inputs and a task cell that is not self-contained, writes the cell's module; nothing
    runs yet. Mistakes are one NotebookError line."""
    count = container_count(config)
    how = (f"{CONTAINER_COUNT_KEY}={count}", f"runs the job as {count} processes", f"{CONTAINER_COUNT_KEY}=1")
    config, python_path = prepare_for_processes(config, task, how)
    return ProcessesJob(config, python_path, max_messages, from_cell=task is not None)


def prepare_for_processes(
    config: Config, task: TaskDefinition | None, how: tuple[str, str, str]
) -> tuple[Config, tuple[str, ...]]:
    """``config`` for container processes that import the notebook's ``task`` (its cell written as a module,
    whose directory is the returned path; else ``task.class``), after refusing what such processes cannot
    run: an in-memory input, a task cell that is not self-contained. ``how``: (what makes the job run in
    processes, what that does, the alternative), for the error lines."""
    what, does, instead = how
    try:
        for stream in input_streams(config):
            if isinstance(system_factory(config, stream.system), InProcessSystemFactory):
                raise NotebookError(
                    f"samza_run: {what} {does}, but its "
                    f"input {stream.system}.{stream.stream} is an in-memory stream, which lives in this "
                    "kernel only: use a stream several processes can share (the durable log, Kafka, "
                    f"files), or {instead}"
                )
        python_path: tuple[str, ...] = ()
        if task is not None:
            missing = undefined_names(task.source)
            if missing:
                raise NotebookError(
                    f"samza_run: the %%samza_task cell of {task.name} uses {', '.join(missing)} without "
                    f"defining or importing {'it' if len(missing) == 1 else 'them'}; with "
                    f"{what}, {SELF_CONTAINED}"
                )
            directory = task_directory(config)
            task_class = write_task_module(task, directory)
            key = APP_CLASS_KEY if task.application else "task.class"
            config = Config({**config, key: task_class}).validate()
            python_path = (str(directory),)
        elif not config.get_str("task.class") and not config.get_str(APP_CLASS_KEY, ""):
            raise NotebookError(
                "samza_run: no task: define one in a %%samza_task cell "
                "(or set task.class = package.module.Task)"
            )
    except NotebookError:
        raise
    except SamzaError as exc:
        raise NotebookError(f"samza_run: {exc}") from None
    return config, python_path


class ProcessesJob:
    """The coordinator and container processes of one run (a RunnableJob, see :mod:`.job`).

    ``await run()`` starts them, watches them until every process exited and cleans up; it raises what
    stopped the coordinator from starting, or :class:`ContainerFailedError` when a container failed.
    ``shutdown()`` (any thread) stops every container gracefully: each commits. ``status()`` is every
    container's last report (None before the coordinator started); ``lines`` the last lines the processes
    wrote to stderr.
    """

    def __init__(
        self,
        config: Config,
        python_path: tuple[str, ...] = (),
        max_messages: int | None = None,
        *,
        from_cell: bool = False,
    ) -> None:
        self.config = config
        self.max_messages = max_messages
        self.from_cell = from_cell
        self.lines: deque[str] = deque(maxlen=50)
        self.processes = ContainerProcesses(config, self._on_line, python_path)
        self._started = False
        self._stop_requested = False
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def job_model(self) -> JobModel | None:
        """The coordinator's job model, once it started."""
        return self.processes.coordinator.job_model if self._started else None

    @property
    def container_count(self) -> int:
        """How many container processes the job runs."""
        return container_count(self.config)

    def status(self) -> JobStatus | None:
        """Every container's last report to the coordinator (None before it started)."""
        return self.processes.status() if self._started else None

    def starting_phase(self) -> str:
        """What the job waits for while it starts: its coordinator, then its container processes."""
        status = self.status()
        if status is None:
            return "the job coordinator (it reads the inputs' partitions and plans the job model)"
        return containers_starting(status, self.container_count, "container processes")

    async def run(self) -> None:
        """Start the coordinator and the processes, watch them to the end, clean up (see the class)."""
        self._loop = asyncio.get_running_loop()
        processes = self.processes
        try:
            await processes.start()
            self._started = True
            if self._stop_requested:
                processes.stop()
            await processes.watch(self._tick, WATCH_INTERVAL_S)
        finally:
            await processes.close()
        failure = self._failure()
        if failure is not None:
            raise ContainerFailedError(failure) from self._failed_message()

    def steering(self) -> CoordinatorSteering:
        """Pause, resume and live knobs of every container, through the job's coordinator."""

        def coordinators() -> list[JobCoordinator]:
            if not self._started:
                raise SamzaError("the job's coordinator has not started yet: nothing to steer")
            return [self.processes.coordinator]

        return SteeringOf(coordinators)

    def shutdown(self) -> None:
        """Stop every container gracefully (each commits); safe from any thread, also before the start."""
        self._stop_requested = True
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self.processes.stop)

    def _tick(self) -> None:
        if self.max_messages is not None and self.processes.processed >= self.max_messages:
            self.shutdown()

    def _failure(self) -> str | None:
        failed = self.processes.failed
        if failed is None:
            return None
        line = self.processes.failure()
        if line is not None and self.from_cell and any(name in line for name in _IMPORT_ERRORS):
            line += f"; {SELF_CONTAINED}"
        return line

    def _failed_message(self) -> TaskFailedError | None:
        """The message a task of the failed container failed on, as its report named it (None: none)."""
        failed = self.processes.failed
        report = (
            None
            if failed is None
            else self.processes.coordinator.job_status().reports.get(failed.container_id)
        )
        if failed is None or report is None or report.failed_at is None:
            return None
        system, stream, partition, offset = report.failed_at
        ssp = SystemStreamPartition(system, stream, partition)
        return TaskFailedError(f"container {failed.container_id}: {report.error}", ssp=ssp, offset=offset)

    def _on_line(self, container_id: str, line: str) -> None:
        self.lines.append(f"[container {container_id}] {line}")
        log.debug("container %s: %s", container_id, line)


__all__ = ["ContainerFailedError", "ProcessesJob", "prepare", "prepare_for_processes"]
