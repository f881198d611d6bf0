"""What ``%samza_run`` runs: the notebook's config and task made into a runnable job and its monitor.

A job of one container runs in the kernel's process (:class:`~samza_nb.container.container.SamzaContainer`
watched by a :class:`~..display.monitor.Monitor`); ``job.container.count`` > 1 runs container processes
(:mod:`.processes_job`) and ``--runner spark`` runs the containers as Spark tasks (:mod:`.spark_job`),
both watched through their job coordinator (:class:`~..display.containers_monitor.ContainersMonitor`).
Mistakes are one-line :class:`NotebookError`\\ s.
"""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from samza_nb.checkpoint.base import MULTI_CONTAINER_CHECKPOINT_FACTORY
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.config import Config
from samza_nb.container.container import SamzaContainer
from samza_nb.container.inputs import input_streams
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.errors import SamzaError
from samza_nb.notebook.display.containers_monitor import ContainersMonitor
from samza_nb.notebook.display.monitor import Monitor
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.magics import cell_config
from samza_nb.notebook.runs import processes_job, spark_job
from samza_nb.notebook.runs.applications import planned_application, run_program
from samza_nb.notebook.runs.fresh_inputs import FreshInputs
from samza_nb.notebook.runs.job import OWN_THREAD
from samza_nb.notebook.runs.runnable import RunMonitor, RunnableJob
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.notebook.magics.task_cell import TaskDefinition
    from samza_nb.runtime.applications import JobProgram

CheckpointStores = MutableMapping[tuple[str, str], dict[str, "Checkpoint"]]


def prepare_job(
    values: dict[str, str],
    task: TaskDefinition | None,
    *,
    state_directory: str,
    checkpoint_stores: CheckpointStores,
    max_messages: int | None = None,
    trace: bool = False,
    runner: str = "local",
    refresh_s: float = 0.2,
    record: str | None = None,
    replay: str | None = None,
    fresh_inputs: FreshInputs | None = None,
) -> tuple[RunnableJob, RunMonitor]:
    """The job to run for config ``values`` and the cell's ``task`` (None: ``task.class``), and its
    monitor. ``checkpoint_stores`` keeps in-memory checkpoints per (job.name, job.id) for the kernel's
    life; ``state_directory`` holds store state unless the config names its own. ``record`` (a
    directory) records the run's schedule there (``job.record.path``); ``replay`` replays one recorded
    there (both for a job of one container). ``fresh_inputs``: when given, a job whose in-memory input was
    made anew since its last run starts afresh (:mod:`.fresh_inputs`)."""
    if not values:
        raise NotebookError(
            "samza_run: no job config: write a %%samza_config cell (or %samza_config key=value ...) first"
        )
    values = dict(values)
    if record is not None:
        values["job.record.path"] = record
    if runner == "spark":  # the containers run in processes of their own: checkpoints they all reach
        values.setdefault(cell_config.CHECKPOINT_FACTORY_KEY, MULTI_CONTAINER_CHECKPOINT_FACTORY)
    config = cell_config.effective_config(values, state_directory)
    program = run_program(config, task)
    config, factory = planned_application(config, program)
    job = config.job_name()
    count = cell_config.container_count(config)
    if runner == "spark" or count > 1:
        if record is not None or replay is not None:
            option = "--record" if record is not None else "--replay"
            raise NotebookError(
                f"samza_run: {option} records or replays the schedule of a job of one container in this "
                f"kernel (job.container.count = 1, --runner local); this job has {count} containers"
                + (" on Spark" if runner == "spark" else "")
            )
        if trace:
            where = "--runner spark" if runner == "spark" else f"job.container.count={count}"
            raise NotebookError(
                "samza_run: --trace records the chooser decisions of a job in this kernel; with "
                f"{where} they are made in the container processes"
            )
        if runner == "spark":
            spark_run = spark_job.prepare(config, task, max_messages)
            where = f"as {count} Spark task{'s' if count != 1 else ''}, their coordinator {OWN_THREAD}"
            return spark_run, ContainersMonitor(spark_run, name=job, mode=where, refresh_s=refresh_s)
        processes = processes_job.prepare(config, task, max_messages)
        where = f"as {count} container processes, their coordinator {OWN_THREAD}"
        return processes, ContainersMonitor(processes, name=job, mode=where, refresh_s=refresh_s)
    container = _container(
        config,
        program,
        max_messages,
        factory,
        replay,
        checkpoint_stores=checkpoint_stores,
        fresh_inputs=fresh_inputs,
        state_directory=state_directory,
    )
    return container, Monitor(container, job=job, mode=OWN_THREAD, refresh_s=refresh_s, trace_all=trace)


def _container(
    config: Config,
    program: JobProgram,
    max_messages: int | None,
    factory: Callable[[], Any] | None,
    replay: str | None,
    *,
    checkpoint_stores: CheckpointStores,
    fresh_inputs: FreshInputs | None,
    state_directory: str,
) -> SamzaContainer:
    try:
        if factory is None:
            factory = program.task_factory()
        for stream in input_streams(config):
            system_factory(config, stream.system)
        manager = None
        if cell_config.uses_notebook_checkpoints(config):
            if fresh_inputs is not None:
                fresh_inputs.check(config, checkpoint_stores, state_directory)
            key = (config.job_name(), config.job_id())
            manager = InMemoryCheckpointManager(checkpoint_stores.setdefault(key, {}))
        return SamzaContainer(
            config,
            factory,
            planner=plan_job_model,
            checkpoint_manager=manager,
            max_messages=max_messages,
            replay=replay,
        )
    except NotebookError:
        raise
    except SamzaError as exc:
        raise NotebookError(f"samza_run: {exc}") from None


__all__ = ["CheckpointStores", "prepare_job"]
