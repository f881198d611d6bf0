"""The notebook's job handle: pause, step, resume, live knobs and hot swap of a job the notebook runs.

``samza_nb.notebook.job(name=None)`` returns a :class:`NotebookJob` for the session's latest (or named) run;
the steering magics (``%samza_pause``, ``%samza_step``, ...) and the dashboard's buttons use the same
handle. The job runs on a thread and event loop of its own (:mod:`.job`); the handle calls the container's
blocking methods, which are safe from any thread but the job's (the kernel's main thread, a widget callback,
a thread of the user's). Steering reaches a job of one container, in the kernel's process; a job of
several container processes or Spark tasks is refused with a :class:`NotebookError` saying so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from samza_nb.container.container import SamzaContainer
from samza_nb.errors import SamzaError
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.runs.processes_job import ProcessesJob
from samza_nb.notebook.runs.spark_job import SparkNotebookJob
from samza_nb.notebook.runs.store_lookup import coordinator_of, lookup
from samza_nb.operators.application import is_application
from samza_nb.operators.swap_shape import swap_task_factory
from samza_nb.runtime.applications import what_job_runs

if TYPE_CHECKING:
    from samza_nb.container.queries import KeyAnswer
    from samza_nb.container.steering.steps import NextMessage, Steps
    from samza_nb.notebook.display.views import JobView
    from samza_nb.notebook.magics.task_cell import TaskDefinition
    from samza_nb.notebook.runs.job import JobRun
    from samza_nb.runtime.steering import CoordinatorSteering


def coordinated(run: JobRun, what: str) -> CoordinatorSteering | None:
    """For a job of several containers (processes or Spark tasks): the steering of its coordinator (pause,
    resume, set reach every container); None for a job of one container in the kernel. A NotebookError
    naming ``what`` for a job that ended."""
    job = run.job
    if not isinstance(job, ProcessesJob | SparkNotebookJob):
        return None
    if run.done:
        raise NotebookError(
            f"{what}: job {run.view.job!r} has ended ({run.outcome}): %samza_run starts it again"
        )
    return job.steering()


def steerable(run: JobRun, what: str) -> SamzaContainer:
    """The container of ``run`` (a job of one container in the kernel); a NotebookError naming ``what``
    (the magic or method) for a job of several containers or one that ended."""
    job = run.job
    name = run.view.job
    if not isinstance(job, SamzaContainer):
        raise NotebookError(
            f"{what}: job {name!r} runs as several containers: pause, resume and set reach them all, while "
            "step, peek and swap steer a job of one container in this kernel (job.container.count = 1, "
            "--runner local)"
        )
    if run.done:
        raise NotebookError(f"{what}: job {name!r} has ended ({run.outcome}): %samza_run starts it again")
    return job


def start_paused(runnable: object, job: str) -> None:
    """``%samza_run --paused``: ``runnable`` (not started yet) starts paused: not one message is processed
    before a step or a resume. A NotebookError for a job of several containers (its containers start
    on their own: pause it once it runs)."""
    if not isinstance(runnable, SamzaContainer):
        raise NotebookError(
            f"samza_run --paused: job {job!r} runs as several containers, which start on their own: "
            "%samza_pause it once it runs (--paused starts a job of one container in this kernel)"
        )
    runnable.steering.pause()


def running_application(run: JobRun, definition: TaskDefinition | None) -> Any:
    """The StreamApplication ``run`` runs (None for a task's job): the ``%%samza_app`` cell's class
    (``definition``, the cell the run started with or last swapped in), else the config's ``app.class``."""
    if definition is not None:
        return definition.cls if definition.application else None
    job = run.job
    if not isinstance(job, SamzaContainer):
        return None
    try:
        program = what_job_runs(job.config)
        return program.application if program.runs_application else None
    except SamzaError:
        return None


class NotebookJob:
    """A handle on one notebook run (``samza_nb.notebook.job()``): ``pause``, ``step``, ``resume``,
    ``set`` and ``swap`` act on its container from any thread but the job's own, as
    :class:`~samza_nb.runtime.local.LocalJobRunner`'s do; ``view`` is the run's latest JobView, ``paused``
    whether it is paused, ``run`` the :class:`~.job.JobRun` itself. The container's errors (a
    :class:`~samza_nb.errors.SamzaError`, a ConfigError for a key that cannot change live) pass through.
    ``application`` is the StreamApplication the job runs (None for a task's job): a swap into it takes
    an application whose graph keeps its shape."""

    def __init__(self, run: JobRun, application: Any = None) -> None:
        self.run = run
        self.application = application

    @property
    def name(self) -> str:
        """The job's name (``job.name``)."""
        return self.run.view.job

    @property
    def view(self) -> JobView:
        """The run's latest view."""
        return self.run.view

    @property
    def paused(self) -> bool:
        """True while the job is paused (for several containers: while a pause is asked of them; False
        for a job that ended)."""
        job = self.run.job
        if self.run.done:
            return False
        if isinstance(job, SamzaContainer):
            return job.steering.paused
        steering = coordinated(self.run, "paused")
        try:
            return steering is not None and steering.paused
        except SamzaError:  # not started yet
            return False

    @property
    def processed(self) -> int:
        """Messages processed so far: the container's count (current, where the view is sampled)."""
        job = self.run.job
        return job.processed if isinstance(job, SamzaContainer) else self.view.processed

    def _container(self, what: str) -> SamzaContainer:
        return steerable(self.run, what)

    def pause(self, timeout: float | None = None) -> None:
        """No new message after the current one; in-flight callbacks complete, every task commits; returns
        once the job is quiet (JobTimeoutError after ``timeout`` s). Idempotent. A job of several
        containers: every container, through the coordinator."""
        steering = coordinated(self.run, "pause")
        if steering is not None:
            steering.pause(timeout)
            return
        self._container("pause").steering.pause(timeout)

    def step(self, n: int = 1, timeout: float | None = None) -> Steps:
        """While paused: process exactly ``n`` messages in the chooser's order and pause again; their
        :class:`~samza_nb.container.steering.steps.Step` records (fewer at end of stream or on timeout)."""
        return self._container("step").steering.step(n, timeout)

    def resume(self) -> None:
        """Dispatch again after :meth:`pause` (a no-op when not paused); every container of a job of
        several."""
        steering = coordinated(self.run, "resume")
        if steering is not None:
            steering.resume()
            return
        self._container("resume").steering.resume()

    def set(self, changes: Mapping[str, Any] | None = None, **keywords: Any) -> dict[str, str]:
        """Change live knobs at the next message boundary; returns the knobs' values in force (see
        :meth:`~samza_nb.container.steering.container_steering.ContainerSteering.set`); for a job of
        several containers the knobs asked of them all (a change one refuses: a ConfigError naming it)."""
        steering = coordinated(self.run, "set")
        if steering is not None:
            values = steering.set(changes, **keywords)
        else:
            values = self._container("set").steering.set(changes, **keywords)
        self.run.knobs = values
        return values

    @property
    def knobs(self) -> Mapping[str, str]:
        """The live knobs' values in force as the last :meth:`set` (any handle's) returned them; empty
        before the first."""
        return self.run.knobs

    def peek(self, timeout: float | None = None) -> NextMessage | None:
        """While paused: the message the next step (or the resume) processes first and why the chooser
        picked it; None when nothing is buffered (see
        :meth:`~samza_nb.container.steering.container_steering.ContainerSteering.peek`)."""
        return self._container("peek").steering.peek(timeout)

    def swap(self, task: Any) -> None:
        """Replace the task code keeping stores, offsets and timers; all or nothing (see
        :meth:`~samza_nb.container.steering.container_steering.ContainerSteering.swap`).
        A job running an application takes an application whose graph keeps its shape (op ids, wiring,
        streams; else a SamzaError listing what differs)."""
        container = self._container("swap")
        if is_application(task) != (self.application is not None):
            running = "an application" if self.application is not None else "a task"
            given = "an application" if is_application(task) else "a task"
            raise NotebookError(
                f"swap: job {self.name!r} runs {running} and {task!r} is {given}: swap replaces like with "
                "like (stop the job and run the new one)"
            )
        if self.application is None:
            container.steering.swap(task)
            return
        container.steering.swap(swap_task_factory(self.application, task, container.config))
        self.application = task

    def get(self, store: str, key: Any, committed: bool = False) -> KeyAnswer:
        """``key``'s value in ``store`` of the running job: live (uncommitted writes included) or, with
        ``committed``, as of the last commit; asked of the container owning the key's partition, and the
        answer names the container, task and partition that answered (see :mod:`.store_lookup`)."""
        return lookup(self.run, store, key, committed=committed)

    @property
    def coordinator_url(self) -> str | None:
        """The URL of the job coordinator of a job of several containers (its ``/stores`` endpoints, with
        :attr:`coordinator_token`); None for a job of one container in the kernel or one that ended."""
        coordinator = None if self.run.done else coordinator_of(self.run, "coordinator_url")
        return coordinator.url if coordinator is not None else None

    @property
    def coordinator_token(self) -> str | None:
        """The token the coordinator's ``/stores`` endpoints need (``Authorization: Bearer <token>``)."""
        coordinator = None if self.run.done else coordinator_of(self.run, "coordinator_token")
        return coordinator.store_token if coordinator is not None else None

    def __repr__(self) -> str:
        state = "paused" if self.paused else str(self.view.state)
        return f"<NotebookJob {self.name!r}: {state}, {self.processed:,} processed>"


__all__ = ["NotebookJob", "coordinated", "running_application", "start_paused", "steerable"]
