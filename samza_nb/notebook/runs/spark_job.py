"""``%samza_run --runner spark``: the job's containers as the tasks of one Spark job
(:class:`~samza_nb.runtime.spark.SparkJobRunner`), on the kernel's SparkSession (the active one) or a new
local one made from ``spark.master`` / ``spark.conf.*``.

The job coordinator runs in the kernel (on the runner's own thread); the dashboard shows each container's
tasks from the coordinator's status, as for a job of several container processes
(:class:`~..display.containers_monitor.ContainersMonitor`). Like those, the containers run in other
processes: the inputs must be shareable (no in-memory stream), a ``%%samza_task`` cell is written as a module
they import, and checkpoints go to the durable log unless ``task.checkpoint.factory`` says otherwise.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from samza_nb.api.job_model import JobModel
from samza_nb.config import Config
from samza_nb.coordinator.status import JobStatus
from samza_nb.errors import SamzaError
from samza_nb.notebook.display.containers_monitor import containers_starting
from samza_nb.notebook.magics.cell_config import container_count
from samza_nb.notebook.magics.task_cell import TaskDefinition
from samza_nb.notebook.runs.processes_job import prepare_for_processes
from samza_nb.runtime.spark.runner import SparkJobRunner

log = logging.getLogger(__name__)

WATCH_INTERVAL_S = 0.1
"""How often the run checks the runner (its end, ``--max-messages``)."""


class SparkContainerFailedError(SamzaError):
    """The Spark job of the containers failed (a container's retries ran out): the message names it."""


def prepare(
    config: Config, task: TaskDefinition | None, max_messages: int | None = None, spark: Any = None
) -> SparkNotebookJob:
    """The Spark job of ``config`` with the notebook's ``task`` (else ``task.class``); nothing runs yet.
    Mistakes are one NotebookError line."""
    how = ("--runner spark", "runs the job's containers in Spark's worker processes", "run it without it")
    config, python_path = prepare_for_processes(config, task, how)
    return SparkNotebookJob(config, python_path, max_messages, spark)


class SparkNotebookJob:
    """One run of the job on Spark (a RunnableJob, see :mod:`.job`). ``await run()`` starts the runner
    (making the SparkSession when there is none: seconds) and waits for its end; it raises what kept the
    job from starting or :class:`SparkContainerFailedError`. ``shutdown()`` (any thread, also before the
    start) stops every container gracefully. ``status()`` is every container's last report."""

    def __init__(
        self,
        config: Config,
        python_path: tuple[str, ...] = (),
        max_messages: int | None = None,
        spark: Any = None,
    ) -> None:
        self.config = config
        self.max_messages = max_messages
        self.runner = SparkJobRunner(config, spark, python_path=python_path)

    @property
    def job_model(self) -> JobModel | None:
        """The coordinator's job model, once it started."""
        return self.runner.job_model

    @property
    def container_count(self) -> int:
        """How many containers (Spark tasks) the job runs."""
        return container_count(self.config)

    def steering(self) -> SparkJobRunner:
        """Pause, resume and live knobs of every container, through the runner's coordinator."""
        return self.runner

    def status(self) -> JobStatus | None:
        """Every container's last report (None before the coordinator started)."""
        return self.runner.status()

    def starting_phase(self) -> str:
        """What the job waits for while it starts: Spark (a session when there is none, the task slots) and
        the coordinator, then the containers in Spark's workers; while Spark has fewer task slots than the job
        needs, which (:mod:`~samza_nb.runtime.spark.slot_wait`)."""
        if self.runner.waiting is not None:
            return self.runner.waiting.line
        status = self.status()
        if status is None:
            return "Spark (the session, its task slots) and the job coordinator"
        return containers_starting(status, self.container_count, "Spark tasks")

    async def run(self) -> None:
        """Start the runner, wait for the end (see the class)."""
        runner = self.runner
        await asyncio.to_thread(runner.start)
        try:
            while not runner.done:
                if self.max_messages is not None and runner.processed >= self.max_messages:
                    runner.stop()
                await asyncio.sleep(WATCH_INTERVAL_S)
        except asyncio.CancelledError:
            runner.cancel()
            await asyncio.to_thread(runner.join)
            raise
        if runner.failure is not None:
            raise SparkContainerFailedError(runner.failure)

    def shutdown(self) -> None:
        """Stop every container gracefully (each commits); safe from any thread."""
        self.runner.stop()


__all__ = ["SparkContainerFailedError", "SparkNotebookJob", "prepare"]
