"""The notebook's job session: its config, its task, the current run, and checkpoints for the kernel's life.

One session belongs to one magics instance (one IPython shell); nothing here is global. Mistakes raise
:class:`NotebookError` (one line in the notebook). In a notebook the session is also bound to ``samza`` for
``async`` cells: ``await samza.wait()`` waits for a background job on the kernel's loop, ``await
samza.until(lambda view: view.processed >= 100)`` for a condition.

Checkpoints: unless the config names ``task.checkpoint.factory``, a job keeps its checkpoints in this
session (per ``job.name``/``job.id``) and its store state in a directory that lives as long as the kernel.
So ``%samza_stop`` then ``%samza_run`` resumes after the last checkpoint, as in Samza, while a restarted
kernel (whose in-memory streams are new) starts afresh. ``%samza_checkpoints --reset`` forgets them.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from samza_nb.checkpoint.base import MULTI_CONTAINER_CHECKPOINT_FACTORY, checkpoint_factory_path
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.config import Config, job_name
from samza_nb.container.container import SamzaContainer
from samza_nb.container.inputs import input_streams
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.errors import SamzaError
from samza_nb.notebook import cell_config, checkpoints, processes_job, spark_job
from samza_nb.notebook.applications import planned_application
from samza_nb.notebook.containers_monitor import ContainersMonitor
from samza_nb.notebook.dashboard import Dashboard
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.interrupts import InterruptRoute
from samza_nb.notebook.job import KERNEL_LOOP, OWN_THREAD, JobRun, RunMonitor, RunnableJob
from samza_nb.notebook.monitor import Monitor
from samza_nb.notebook.processes_job import ProcessesJob
from samza_nb.notebook.spark_job import SparkNotebookJob
from samza_nb.notebook.task_cell import TaskDefinition, define_task
from samza_nb.notebook.text_status import StatusReport, render_text
from samza_nb.notebook.views import plural, rate_text
from samza_nb.runtime.applications import load_task_factory
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from samza_nb.checkpoint.checkpoint import Checkpoint
    from samza_nb.notebook.views import JobView
    from samza_nb.observe.events import ChooserDecision

Printer = Callable[[str], None]
Displayer = Callable[..., Any]


class NotebookSession:
    """The job of one notebook. ``show`` prints a line to the cell; ``display`` shows a rich object."""

    def __init__(
        self,
        *,
        show: Printer = print,
        display: Displayer | None = None,
        refresh_s: float = 0.2,
        route_interrupts: bool = True,
    ) -> None:
        self.config: dict[str, str] = {}
        self.task: TaskDefinition | None = None
        self.run: JobRun | None = None
        self.dashboard: Dashboard | None = None
        self.refresh_s = refresh_s
        self.route_interrupts = route_interrupts
        self._show = show
        self._display = display
        self._stores: dict[tuple[str, str], dict[str, Checkpoint]] = {}
        self._state_dir: str | None = None
        self._route: InterruptRoute | None = None
        self._display_handle: Any = None
        self._ui = "text"

    # -- config and task ------------------------------------------------------------------------------------
    def set_config(self, values: dict[str, str], *, replace: bool) -> str:
        """Replace the config (a ``%%samza_config`` cell) or set keys in it (``%samza_config k=v``)."""
        merged = dict(values) if replace else {**self.config, **values}
        cell_config.check_values(merged)
        self.config = merged
        note = (
            " (the running job keeps its config: this applies to the next %samza_run)" if self.running else ""
        )
        return cell_config.summary(merged) + note

    def define_task(
        self,
        cell: str,
        namespace: dict[str, Any],
        requested: str | None,
        filename: str,
        *,
        application: bool = False,
    ) -> str:
        """Run a ``%%samza_task`` cell (``application``: a ``%%samza_app`` cell) and make its class the job's
        task (or StreamApplication); refused while a job runs."""
        magic, what = ("samza_app", "application") if application else ("samza_task", "task")
        if self.running:
            raise NotebookError(
                f"{magic}: job {self._job_name()!r} is running: %samza_stop it before replacing its {what} "
                "(the cell was not run)"
            )
        previous = self.task
        self.task = define_task(
            cell, namespace, requested=requested, filename=filename, application=application
        )
        if previous is None:
            return f"{what} {self.task.name} defined: %samza_run runs it"
        ran = f" (the previous run of job {self.run.view.job!r} has {self.run.outcome})" if self.run else ""
        before = "application" if previous.application else "task"
        return f"{what} {self.task.name} replaces {before} {previous.name} for the next %samza_run{ran}"

    # -- running ------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while a run has not ended."""
        return self.run is not None and not self.run.done

    @property
    def interrupts_routed(self) -> bool:
        """True while the kernel's interrupt (SIGINT) stops the background job running on its loop."""
        return self._route is not None and self._route.installed

    def start(
        self,
        *,
        wait: bool = False,
        timeout: float | None = None,
        max_messages: int | None = None,
        ui: str = "text",
        trace: bool = False,
        runner: str = "local",
    ) -> None:
        """``%samza_run``: start the job; with ``wait``, block until it ends (see :mod:`.job`).

        ``ui``: ``widgets`` (the live dashboard), ``text`` (lines of text) or ``off``; ``runner``:
        ``local`` (the kernel, or ``job.container.count`` processes) or ``spark`` (the containers as the
        tasks of one Spark job, :mod:`.spark_job`). Raises NotebookError for mistakes and, with ``wait``,
        when the job failed.
        """
        if self.running:
            assert self.run is not None
            raise NotebookError(
                f"samza_run: job {self.run.view.job!r} is already running ({self.run.view.processed:,} "
                "processed): %samza_stop it first"
            )
        job = self._job_name()
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        on_kernel_loop = loop is not None and not wait
        mode = KERNEL_LOOP if on_kernel_loop else OWN_THREAD
        runnable, monitor = self._prepare(job, mode, max_messages, trace, runner)
        self.dashboard = None
        self._ui = ui
        if ui == "widgets":
            self.dashboard = Dashboard(job, on_stop=self.request_stop if on_kernel_loop else None)
            self._display_handle = self._show_rich(self.dashboard)
            if on_kernel_loop:
                monitor.listeners.append(self.dashboard.render)
        if on_kernel_loop:
            assert loop is not None
            self.run = JobRun.on_loop(runnable, monitor, loop, timeout)
            self.run.on_done.append(self._on_kernel_job_done)
            if self.route_interrupts and InterruptRoute.available(loop):
                self._route = InterruptRoute(loop, self._interrupted)
                self._route.start()
        else:
            self.run = JobRun.on_thread(runnable, monitor, timeout)
        if not wait:
            if ui != "widgets":
                how = monitor.view.mode if isinstance(runnable, ProcessesJob | SparkNotebookJob) else mode
                self._show(
                    f"job {job!r} started in the background {how}: %samza_status shows progress, "
                    "%samza_stop stops it"
                )
            return
        self._wait_and_report(self.run)

    def _prepare(
        self, job: str, mode: str, max_messages: int | None, trace: bool, runner: str = "local"
    ) -> tuple[RunnableJob, RunMonitor]:
        """The job to run and its monitor: a container in this process, (``job.container.count`` > 1)
        the job's container processes, or (``runner`` spark) its containers as Spark tasks."""
        if not self.config:
            raise NotebookError(
                "samza_run: no job config: write a %%samza_config cell (or %samza_config key=value ...) first"
            )
        values = dict(self.config)
        if runner == "spark":  # the containers run in processes of their own: checkpoints they all reach
            values.setdefault(cell_config.CHECKPOINT_FACTORY_KEY, MULTI_CONTAINER_CHECKPOINT_FACTORY)
        config = cell_config.effective_config(values, self._state_directory())
        config, factory = planned_application(config, self.task)
        count = cell_config.container_count(config)
        if runner == "spark":
            if trace:
                raise NotebookError(
                    "samza_run: --trace records the chooser decisions of a job in this kernel; with "
                    "--runner spark they are made in the container processes"
                )
            spark_run = spark_job.prepare(config, self.task, max_messages)
            where = f"as {count} Spark task{'s' if count != 1 else ''}, their coordinator {mode}"
            return spark_run, ContainersMonitor(spark_run, name=job, mode=where, refresh_s=self.refresh_s)
        if count <= 1:
            container = self._container(config, max_messages, factory)
            return container, Monitor(
                container, job=job, mode=mode, refresh_s=self.refresh_s, trace_all=trace
            )
        if trace:
            raise NotebookError(
                f"samza_run: --trace records the chooser decisions of a job in this kernel; with "
                f"job.container.count={count} they are made in the container processes"
            )
        processes = processes_job.prepare(config, self.task, max_messages)
        where = f"as {count} container processes, their coordinator {mode}"
        return processes, ContainersMonitor(processes, name=job, mode=where, refresh_s=self.refresh_s)

    def _container(
        self, config: Config, max_messages: int | None, factory: Callable[[], Any] | None = None
    ) -> SamzaContainer:
        try:
            if factory is None:
                factory = self.task.factory() if self.task is not None else self._configured_task(config)
            for stream in input_streams(config):
                system_factory(config, stream.system)
            manager = None
            if cell_config.uses_notebook_checkpoints(config):
                key = (config.job_name(), config.job_id())
                manager = InMemoryCheckpointManager(self._stores.setdefault(key, {}))
            return SamzaContainer(
                config, factory, planner=plan_job_model, checkpoint_manager=manager, max_messages=max_messages
            )
        except NotebookError:
            raise
        except SamzaError as exc:
            raise NotebookError(f"samza_run: {exc}") from None

    @staticmethod
    def _configured_task(config: Config) -> Callable[[], Any]:
        if not config.get_str("task.class"):
            raise NotebookError(
                "samza_run: no task: define one in a %%samza_task cell (or an application in a %%samza_app "
                "cell; or set task.class = package.module.Task)"
            )
        return load_task_factory(config)

    def _wait_and_report(self, run: JobRun) -> None:
        dashboard = self.dashboard
        tick = (lambda: dashboard.render(run.monitor.view)) if dashboard is not None else None
        run.wait(tick=tick, tick_s=self.refresh_s)
        view = run.view
        if dashboard is not None:
            dashboard.render(view)
            self._update_rich(dashboard)
        if run.outcome == "failed":
            raise NotebookError(f"job {view.job!r} failed after {view.processed:,} messages: {view.error}")
        if self._ui == "text" and view.tasks:
            self._show(render_text(view))
        self._show(self.outcome_line(view))

    @staticmethod
    def outcome_line(view: JobView) -> str:
        """``job 'x' finished: 6 messages in 0.05 s (avg 120 msg/s); every input reached end-of-stream;
        ...``."""
        line = (
            f"job {view.job!r} {view.state}: {plural(view.processed, 'message')} in {view.elapsed_s:.2f} s "
            f"({rate_text(view)})"
        )
        partitions = view.partitions
        if partitions and all(p.ended for p in partitions):
            line += "; every input reached end-of-stream"
        if view.commit_count:
            line += f"; {view.commit_count} checkpoint{'s' if view.commit_count != 1 else ''} written"
        if view.error:
            line += f"; {view.error}"
        return line

    def request_stop(self) -> None:
        """Ask the running job to stop gracefully (from a button, an interrupt or ``%samza_stop``)."""
        if self.run is not None:
            self.run.stop()

    def _interrupted(self) -> None:
        if self.run is not None:
            self.run.stop("interrupted")

    def stop(self) -> str:
        """``%samza_stop``: stop gracefully; a job on its own thread is waited for, one on the kernel's loop
        finishes its stop as soon as the cell returns."""
        run = self.run
        if run is None or run.done:
            what = f" (the last run {run.outcome})" if run is not None else ""
            return f"no job is running{what}"
        run.stop()
        if run.mode == KERNEL_LOOP:
            return (
                f"job {run.view.job!r} is stopping: in-flight messages finish and every task commits as "
                "soon as this cell returns (await samza.wait() in a cell waits for it)"
            )
        self._wait_and_report(run)
        return ""

    def _on_kernel_job_done(self, run: JobRun) -> None:
        if self._route is not None:
            self._route.close()
            self._route = None
        if self.dashboard is not None and run is self.run:
            self._update_rich(self.dashboard)

    # -- awaiting (async cells) ----------------------------------------------------------------------------
    async def wait(self, timeout: float | None = None) -> StatusReport:
        """Wait until the current run ended (or ``timeout`` seconds passed); returns its status."""
        if self.run is not None:
            await self.run.wait_async(timeout)
        return self.status()

    async def until(self, condition: Callable[[JobView], bool], timeout: float = 30.0) -> bool:
        """Wait until ``condition(view)`` holds for the current run's latest view; False after ``timeout``
        seconds or when the run ended without it."""
        deadline = time.monotonic() + timeout
        while self.run is not None:
            if condition(self.run.view):
                return True
            if self.run.done or time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)
        return False

    @property
    def view(self) -> JobView | None:
        """The latest view of the current (or last) run."""
        return self.run.view if self.run is not None else None

    @property
    def decisions(self) -> list[ChooserDecision]:
        """Every chooser decision of the last ``%samza_run --trace`` run, in order."""
        return list(self.run.monitor.decisions) if self.run is not None else []

    # -- reports ------------------------------------------------------------------------------------------
    def status(self) -> StatusReport:
        """``%samza_status``: the latest view of the job, or what is missing before a first run."""
        if self.run is None:
            lines = [
                "no job has run yet in this notebook",
                cell_config.summary(self.config) if self.config else "config: none (%%samza_config)",
                f"task: {self.task.name}" if self.task else "task: none (%%samza_task, or task.class)",
            ]
            return StatusReport(None, lines)
        return StatusReport(self.run.view)

    def checkpoints(self, reset: bool = False) -> checkpoints.CheckpointReport | str:
        """``%samza_checkpoints``: the last checkpoint of every task, and the latest run's history."""
        config = self.run.job.config if self.run is not None else Config(self.config)
        job = config.job_name()
        key = (job, config.job_id())
        if reset:
            if self.running:
                raise NotebookError("samza_checkpoints: the job is running: %samza_stop it before --reset")
            self._stores.pop(key, None)
            return (
                f"checkpoints of job {job!r} forgotten: the next run starts from "
                "systems.<system>.samza.offset.default"
            )
        history = self.run.view.commits if self.run is not None else ()
        if cell_config.uses_notebook_checkpoints(config):
            offsets = checkpoints.from_store(self._stores.get(key, {}))
            return checkpoints.CheckpointReport(job, "in memory, kept for this kernel", offsets, history)
        factory = config.get_str(cell_config.CHECKPOINT_FACTORY_KEY, "")
        run = self.run
        model = run.job.job_model if run is not None else None
        if run is None or model is None:
            return checkpoints.CheckpointReport(job, factory, {}, (), "no run yet: its tasks are not known")
        if not run.done:
            offsets = checkpoints.from_view(run.view)
            return checkpoints.CheckpointReport(job, "committed offsets of the running job", offsets, history)
        tasks = sorted(model.tasks)
        source = factory or checkpoint_factory_path(config)
        return checkpoints.CheckpointReport(job, source, checkpoints.from_factory(config, tasks), history)

    def store_container(self) -> SamzaContainer | None:
        """The container of the current (or last) run, whose stores ``%%samza_sql`` queries; None before a
        first run. A job of several containers keeps its stores in its processes: a NotebookError."""
        run = self.run
        if run is None:
            return None
        job = run.job
        if isinstance(job, ProcessesJob | SparkNotebookJob):
            raise NotebookError(
                f"samza_sql: job {run.view.job!r} runs as container processes, which hold its stores: "
                "%%samza_sql queries the stores of a job of one container (job.container.count = 1)"
            )
        return cast("SamzaContainer", job)  # a job in the kernel's process is its container

    # -- plumbing -----------------------------------------------------------------------------------------
    def _job_name(self) -> str:
        return job_name(self.config)

    def _state_directory(self) -> str:
        if self._state_dir is None:
            path = tempfile.mkdtemp(prefix="samza_nb-notebook-")
            weakref.finalize(self, shutil.rmtree, path, True)
            self._state_dir = path
        return self._state_dir

    def _show_rich(self, obj: Any) -> Any:
        if self._display is None:
            return None
        return self._display(obj, display_id=True)

    def _update_rich(self, obj: Any) -> None:
        handle = self._display_handle
        if handle is not None and hasattr(handle, "update"):
            handle.update(obj)

    def close(self) -> None:
        """Stop a running job (waiting briefly for one on its own thread) and forget the session."""
        run = self.run
        if run is not None and not run.done:
            run.stop()
            if run.mode == OWN_THREAD:
                run.join(5.0)
        if self._route is not None:
            self._route.close()
            self._route = None


__all__ = ["NotebookSession"]
