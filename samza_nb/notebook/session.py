"""The notebook's jobs: their config, their task, the runs, and checkpoints for the kernel's life.

One session belongs to one magics instance (one IPython shell); nothing here is global. Mistakes raise
:class:`NotebookError` (one line in the notebook). In a notebook the session is also bound to ``samza``:
``await samza.wait()`` waits for the background jobs, ``await samza.until(lambda view: view.processed >=
100)`` for a condition on the latest job's view.

Runs: every ``%samza_run`` starts a run on its own thread and event loop (:mod:`.runs.job`), named after its
``job.name`` (``--name`` sets it); several named jobs may run at once, each with its own dashboard, which
one thread keeps moving (:mod:`.display.updater`) and replaces by a static HTML snapshot when the job ends. In
a kernel, what the job prints goes to an output area of the cell that started it (:mod:`.runs.cell_output`).

A failure is shown once, naming the task cell's line (``%tb`` then shows the task's traceback): by the cell
that waits for the job (``--wait``, ``%samza_stop``), else by the job's dashboard, else in the next cell
the user runs (:mod:`.failure_telling`). The runs by name are kept by :mod:`.notebook_runs`, a run's
dashboard is made and watched by :mod:`.run_dashboard`.

Checkpoints: unless the config names ``task.checkpoint.factory``, a job keeps its checkpoints in this
session (per ``job.name``/``job.id``) and its store state in a directory that lives as long as the kernel.
So ``%samza_stop`` then ``%samza_run`` resumes after the last checkpoint, as in Samza, while a restarted
kernel (whose in-memory streams are new), or an in-memory input made anew by a data cell run again,
starts afresh (:mod:`.runs.fresh_inputs`). ``%samza_checkpoints --reset`` forgets them.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samza_nb.config import job_name
from samza_nb.notebook.display.text_status import StatusReport, outcome_line, render_text
from samza_nb.notebook.display.updater import DashboardUpdater
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.failure_telling import FailureTelling
from samza_nb.notebook.magics import cell_config, checkpoints
from samza_nb.notebook.magics.task_cell import TaskDefinition, define_task, defined_line
from samza_nb.notebook.notebook_runs import NotebookRuns
from samza_nb.notebook.run_dashboard import RunDashboard
from samza_nb.notebook.runs.applications import ignored_class_note
from samza_nb.notebook.runs.cell_output import CellOutput
from samza_nb.notebook.runs.fresh_inputs import FreshInputs
from samza_nb.notebook.runs.job import JobRun
from samza_nb.notebook.runs.prepare import prepare_job
from samza_nb.notebook.runs.steering import NotebookJob, running_application, start_paused
from samza_nb.notebook.runs.waiting import idle_note
from samza_nb.observe.states import RunOutcome

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.config import Config
    from samza_nb.notebook.display.dashboard import Dashboard
    from samza_nb.notebook.display.views import JobView
    from samza_nb.observe.events import ChooserDecision

Printer = Callable[[str], None]
Displayer = Callable[..., Any]


class NotebookSession:
    """The jobs of one notebook. ``show`` prints a line to the cell; ``display`` shows a rich object;
    ``route_output`` (in a kernel) sends what a job prints to its run cell.

    ``runs`` holds every named run (the latest first started last); ``run`` and ``dashboard`` are the
    latest run and its dashboard."""

    def __init__(
        self,
        *,
        show: Printer = print,
        display: Displayer | None = None,
        refresh_s: float = 0.2,
        route_output: bool = False,
    ) -> None:
        self.config: dict[str, str] = {}
        self.route_output = route_output
        self.task: TaskDefinition | None = None
        self._runs = NotebookRuns()
        self.runs: dict[str, JobRun] = self._runs.by_job
        self.dashboard: Dashboard | None = None
        self.refresh_s = refresh_s
        self.updater = DashboardUpdater(refresh_s)
        self._show = show
        self._display = display
        self._stores: dict[tuple[str, str], dict[str, Checkpoint]] = {}
        self._state_dir: str | None = None
        self._fresh_inputs = FreshInputs(show)  # a job whose in-memory input was made anew starts afresh
        self._failures = FailureTelling(self._runs)

    @property
    def run(self) -> JobRun | None:
        """The latest run (None before a first ``%samza_run``)."""
        return self._runs.latest

    # -- config and task ------------------------------------------------------------------------------------
    def set_config(self, values: dict[str, str], *, replace: bool) -> str:
        """Replace the config (a ``%%samza_config`` cell) or set keys in it (``%samza_config k=v``)."""
        merged = dict(values) if replace else {**self.config, **values}
        cell_config.check_values(merged)
        self.config = merged
        note = (
            " (running jobs keep their config: this applies to the next %samza_run)" if self.running else ""
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
        """Run a ``%%samza_task`` cell (``application``: a ``%%samza_app`` cell) and make its class the task
        (or StreamApplication) of the next ``%samza_run``; running jobs keep theirs."""
        previous = self.task
        self.task = define_task(
            cell, namespace, requested=requested, filename=filename, application=application
        )
        running = self._runs.running_jobs()
        last = f"job {self.run.view.job!r} has {self.run.outcome}" if self.run else None
        return defined_line(self.task, previous, running, last)

    def swapped(self, job: str, definition: TaskDefinition) -> None:
        """``%%samza_task --swap``: ``definition`` now runs in job ``job`` (its failures name this cell)
        and is the next run's task."""
        self.task = definition
        self._runs.swapped(job, definition)

    # -- running ------------------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        """True while any run has not ended."""
        return self._runs.running

    def start(
        self,
        *,
        wait: bool = False,
        timeout: float | None = None,
        max_messages: int | None = None,
        ui: str = "text",
        trace: bool = False,
        runner: str = "local",
        name: str | None = None,
        awaiting: bool = False,
        record: str | None = None,
        replay: str | None = None,
        paused: bool = False,
    ) -> JobRun:
        """``%samza_run``: start the job on its own thread; with ``wait``, block until it ends (with
        ``awaiting`` too, return at once: the caller awaits :meth:`wait_and_report_async`).

        ``name`` (``--name``) sets ``job.name`` for this run; runs are keyed by it, and several named jobs
        may run at once. ``ui``: ``widgets`` (the live dashboard), ``text`` or ``off``; ``runner``:
        ``local`` (the kernel, or ``job.container.count`` processes) or ``spark`` (:mod:`.runs.spark_job`);
        ``record``/``replay``: a directory to record the run's schedule into, or to replay one from;
        ``paused``: the job starts paused (a job of one container; see :func:`.runs.steering.start_paused`).
        Raises NotebookError for mistakes and, with ``wait``, when the job failed.
        """
        values = dict(self.config)
        if name is not None:
            values["job.name"] = name
        job = job_name(values)
        current = self.runs.get(job)
        if current is not None and not current.done:
            raise NotebookError(
                f"samza_run: job {job!r} is already running ({current.view.processed:,} processed): "
                f"%samza_stop {job} first (or --name another)"
            )
        runnable, monitor = prepare_job(
            values,
            self.task,
            state_directory=self._state_directory(),
            checkpoint_stores=self._stores,
            max_messages=max_messages,
            trace=trace,
            runner=runner,
            refresh_s=self.refresh_s,
            record=record,
            replay=replay,
            fresh_inputs=self._fresh_inputs,
        )
        if paused:
            start_paused(runnable, job)
        note = ignored_class_note(values, self.task)
        if note is not None:
            self._show(note)
        dashboard = RunDashboard(job, runnable, self._display) if ui == "widgets" else None
        for line in self.report_failures():  # a failure not told yet is told before its run is replaced
            self._show(line)
        if wait:
            self._failures.waited_for(job)
        output = CellOutput(self.refresh_s) if self.route_output else None
        run = JobRun.on_thread(runnable, monitor, timeout, output)
        self._runs.add(job, run, self.task, ui)
        self.dashboard = dashboard.dashboard if dashboard is not None else None
        if dashboard is not None:
            self.updater.refresh_s = self.refresh_s
            dashboard.attach(run, self.updater, self._failures.dashboard_view)
        if not wait:
            if paused:
                self._show(
                    f"job {job!r} started paused: %samza_peek shows the next message, %samza_step [N] "
                    f"processes the next ones, %samza_resume {job} lets it go on"
                )
            elif ui != "widgets":
                self._show(
                    f"job {job!r} started in the background {monitor.view.mode}: %samza_status shows "
                    f"progress, %samza_stop {job} stops it"
                )
            return run
        if not awaiting:
            self._wait_and_report(run)
        return run

    def _wait_and_report(self, run: JobRun) -> None:
        with self._failures.telling(run):
            run.wait(tick=self._idle_note(run), notify=self._show)
            self._report_end(run)

    async def wait_and_report_async(self, run: JobRun) -> None:
        """Wait for ``run`` in an awaiting cell (the kernel keeps handling widget messages: the Stop button
        works), then report as a blocking wait does."""
        with self._failures.telling(run):
            await run.wait_async(interruptible=True, tick=self._idle_note(run), notify=self._show)
            self._report_end(run)

    def _idle_note(self, run: JobRun) -> Callable[[], None]:
        return idle_note(run, self._show, stop_button=self._runs.ui_of(run.view.job) == "widgets")

    def _report_end(self, run: JobRun) -> None:
        self.updater.flush(run)  # its dashboard shows the end before the lines below
        view = run.view
        if run.outcome is RunOutcome.FAILED:
            raise NotebookError(self._failures.line(run))
        if self._runs.ui_of(view.job) == "text" and view.tasks:
            self._show(render_text(view))
        self._show(outcome_line(view))

    def report_failures(self) -> list[str]:
        """Lines for jobs that failed in the background since the last call (each failure once): shown
        at the start of the next cell the user runs. A job with a dashboard is left out: its dashboard
        tells its failure."""
        return self._failures.untold()

    def request_stop(self, name: str | None = None) -> None:
        """Ask a running job (``name``; default every one) to stop gracefully, without waiting."""
        for run in self._runs.selected(name):
            run.stop()

    def stop(self, name: str | None = None) -> str:
        """``%samza_stop [NAME]``: stop the named job (default: every running job) gracefully and wait
        for it (in-flight messages finish, every task commits)."""
        runs = [run for run in self._runs.selected(name) if not run.done]
        if not runs:
            if name is not None and name not in self.runs:
                known = ", ".join(repr(n) for n in self.runs) or "none"
                raise NotebookError(f"samza_stop: no job named {name!r} has run (jobs: {known})")
            last = self.runs.get(name) if name is not None else self.run
            what = f" (the last run {last.outcome})" if last is not None else ""
            return f"no job is running{what}"
        with contextlib.ExitStack() as telling:
            for run in runs:
                telling.enter_context(self._failures.telling(run))
                run.stop()
            for run in runs:
                run.wait()
                self._report_end(run)
        return ""

    # -- awaiting (async cells) ----------------------------------------------------------------------------
    async def wait(self, timeout: float | None = None, name: str | None = None) -> StatusReport:
        """Wait until the named run (default: every run) ended, or ``timeout`` seconds passed; returns the
        status of that run (default: the latest)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for run in self._runs.selected(name):
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if await run.wait_async(left):
                await asyncio.to_thread(self.updater.flush, run)  # its dashboard shows the end
        return self.status(name)

    async def until(
        self, condition: Callable[[JobView], bool], timeout: float = 30.0, name: str | None = None
    ) -> bool:
        """Wait until ``condition(view)`` holds for the latest view of the named run (default: the latest
        run); False after ``timeout`` seconds or when the run ended without it."""
        deadline = time.monotonic() + timeout
        while True:
            run = self.runs.get(name) if name is not None else self.run
            if run is None:
                return False
            if condition(run.view):
                return True
            if run.done or time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.02)

    @property
    def view(self) -> JobView | None:
        """The latest view of the latest run."""
        return self.run.view if self.run is not None else None

    @property
    def decisions(self) -> list[ChooserDecision]:
        """Every chooser decision of the last ``%samza_run --trace`` run, in order."""
        return list(self.run.monitor.decisions) if self.run is not None else []

    # -- reports ------------------------------------------------------------------------------------------
    def job(self, name: str | None = None, magic: str = "job") -> NotebookJob:
        """The steering handle on the latest run (or job ``name``'s); a NotebookError before a first run."""
        run = self._runs.named(name, magic)
        if run is None:
            raise NotebookError(f"{magic}: no job has run yet in this notebook: %samza_run starts one")
        return self._steering(run)

    def _steering(self, run: JobRun) -> NotebookJob:
        return NotebookJob(run, running_application(run, self._runs.task_of(run.view.job)))

    def status(self, name: str | None = None) -> StatusReport:
        """``%samza_status [NAME]``: the latest view of the job, or what is missing before a first run."""
        run = self._runs.named(name, "samza_status")
        if run is None:
            lines = [
                "no job has run yet in this notebook",
                cell_config.summary(self.config) if self.config else "config: none (%%samza_config)",
                f"task: {self.task.name}" if self.task else "task: none (%%samza_task, or task.class)",
            ]
            return StatusReport(None, lines)
        return StatusReport(run.view)

    def checkpoints(self, reset: bool = False, name: str | None = None) -> checkpoints.CheckpointReport | str:
        """``%samza_checkpoints [NAME]``: the last checkpoint of every task, and the run's history."""
        run, config = self._job_config(name, "samza_checkpoints")
        if reset:
            return checkpoints.reset(run, config, self._stores)
        return checkpoints.report(run, config, self._stores)

    def clean(self, name: str | None = None, **options: bool) -> str:
        """``%samza_clean [NAME]``: remove what the job left (``options``: :func:`.magics.checkpoints.clean`'s
        ``dry_run``, ``everything``, ``topics``); the lines saying what and how much."""
        run, config = self._job_config(name, "samza_clean")
        return checkpoints.clean(run, config, self._stores, **options)

    def _job_config(self, name: str | None, magic: str) -> tuple[JobRun | None, Config]:
        """The latest run (or job ``name``'s) and its config; before a first run, the notebook's config."""
        run = self._runs.named(name, magic)
        if run is not None:
            return run, run.job.config
        return None, cell_config.effective_config(self.config, self._state_directory())

    def config_of(self, name: str | None, magic: str) -> Config:
        """The config of the latest run (or job ``name``'s); before a first run, the notebook's (a
        NotebookError when there is none yet)."""
        if name is None and self.run is None and not self.config:
            raise NotebookError(f"{magic}: no job config yet: write a %%samza_config cell")
        return self._job_config(name, magic)[1]

    def store_run(self, store: str = "") -> JobRun | None:
        """The run whose stores ``%%samza_sql`` queries: the latest run that has ``store`` (else the latest
        run); None before a first run."""
        return self._runs.with_store(store)

    # -- plumbing -----------------------------------------------------------------------------------------
    def _state_directory(self) -> str:
        if self._state_dir is None:
            path = tempfile.mkdtemp(prefix="samza_nb-notebook-")
            weakref.finalize(self, shutil.rmtree, path, True)
            self._state_dir = path
        return self._state_dir

    def close(self) -> None:
        """Stop every running job (waiting briefly for each) and the dashboard thread."""
        for run in self.runs.values():
            if not run.done:
                run.stop()
        for run in self.runs.values():
            run.join(5.0)
        self.updater.close()


__all__ = ["NotebookSession"]
