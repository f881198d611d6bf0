"""Who tells a run's failure, and the one line that tells it: shown once.

A failure is told by the cell that waits for the job (``--wait``, ``%samza_stop``), else by the job's
dashboard, else in the next cell the user runs (:meth:`FailureTelling.untold`). The line names the task
cell's line (:func:`~samza_nb.notebook.runs.failures.failure_line`).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

from samza_nb.notebook.runs.failures import failure_line
from samza_nb.observe.states import RunOutcome

if TYPE_CHECKING:
    from samza_nb.notebook.display.views import JobView
    from samza_nb.notebook.notebook_runs import NotebookRuns
    from samza_nb.notebook.runs.job import JobRun


class FailureTelling:
    """Who tells the failures of ``runs`` (the notebook's runs): see the module docstring."""

    def __init__(self, runs: NotebookRuns) -> None:
        self._runs = runs
        self._told_by_cell: set[str] = set()  # jobs whose failure the cell waiting for them tells

    def waited_for(self, job: str) -> None:
        """The cell that starts ``job`` waits for it: that cell tells its failure."""
        self._told_by_cell.add(job)

    @contextlib.contextmanager
    def telling(self, run: JobRun) -> Iterator[None]:
        """While this cell waits for ``run``, a failure of it is this cell's to tell (not its dashboard's)."""
        job = run.view.job
        self._told_by_cell.add(job)
        try:
            yield
        finally:
            self._told_by_cell.discard(job)

    def dashboard_view(self, run: JobRun) -> JobView:
        """What ``run``'s dashboard shows: its view, where the end of a failed run carries the failure line
        unless a waiting cell tells it (then the dashboard says "failed" and the cell says why, once)."""
        view = run.view
        if not run.done or run.outcome is not RunOutcome.FAILED:
            return view
        told_here = self.told_by(run) == "dashboard"
        return dataclasses.replace(view, error=self.line(run) if told_here else None)

    def line(self, run: JobRun) -> str:
        """The one line that reports ``run``'s failure (see :func:`failure_line`); marks it as shown."""
        run.failure_reported = True
        return failure_line(
            run.view.job,
            run.view.processed,
            run.view.error,
            run.error,
            self._runs.task_of(run.view.job),
            run.job.config.get_str("job.record.path", "") or None,
        )

    def untold(self) -> list[str]:
        """Lines for jobs that failed in the background since the last call (each failure once): shown
        at the start of the next cell the user runs. A job with a dashboard is left out: its dashboard
        tells its failure."""
        untold = [run for run in self._runs.by_job.values() if run.done and not run.failure_reported]
        return [
            self.line(run)
            for run in untold
            if run.outcome is RunOutcome.FAILED and self.told_by(run) == "next cell"
        ]

    def told_by(self, run: JobRun) -> str:
        """Who tells ``run``'s failure: the ``cell`` waiting for it, its ``dashboard``, or the ``next cell``
        the user runs."""
        job = run.view.job
        if job in self._told_by_cell:
            return "cell"
        return "dashboard" if self._runs.ui_of(job) == "widgets" else "next cell"


__all__ = ["FailureTelling"]
