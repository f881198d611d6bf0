"""The runs of one notebook, by job name: the latest, the named ones, and what each ran with (its task cell
and its kind of dashboard).

Every ``%samza_run`` adds one (:meth:`NotebookRuns.add`), replacing the earlier run of the same
``job.name``; the magics that take a job ``NAME`` find it here (:meth:`NotebookRuns.named`), naming the
known jobs when there is no such one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.notebook.errors import NotebookError

if TYPE_CHECKING:
    from samza_nb.notebook.magics.task_cell import TaskDefinition
    from samza_nb.notebook.runs.job import JobRun


class NotebookRuns:
    """The notebook's runs: ``by_job`` every named run (the latest started last), ``latest`` the latest;
    per job, the task definition it runs (its failures name that cell) and its ``ui`` (``widgets``,
    ``text`` or ``off``)."""

    def __init__(self) -> None:
        self.by_job: dict[str, JobRun] = {}
        self.latest: JobRun | None = None
        self._tasks: dict[str, TaskDefinition | None] = {}
        self._uis: dict[str, str] = {}

    def add(self, job: str, run: JobRun, task: TaskDefinition | None, ui: str) -> None:
        """``run`` of ``job`` started (running ``task``, shown with ``ui``): it replaces the job's earlier
        run and is the latest."""
        self.by_job.pop(job, None)
        self.by_job[job] = run
        self.latest = run
        self._tasks[job] = task
        self._uis[job] = ui

    def swapped(self, job: str, definition: TaskDefinition) -> None:
        """``definition`` now runs in ``job`` (``%%samza_task --swap``)."""
        self._tasks[job] = definition

    def task_of(self, job: str) -> TaskDefinition | None:
        """The task definition ``job`` runs (None: the config names its class, or no run yet)."""
        return self._tasks.get(job)

    def ui_of(self, job: str) -> str | None:
        """How ``job``'s latest run is shown (``widgets``, ``text`` or ``off``; None before a run)."""
        return self._uis.get(job)

    @property
    def running(self) -> bool:
        """True while any run has not ended."""
        return any(not run.done for run in self.by_job.values())

    def running_jobs(self) -> list[str]:
        """The names of the jobs running now, sorted."""
        return sorted(name for name, run in self.by_job.items() if not run.done)

    def named(self, name: str | None, magic: str) -> JobRun | None:
        """The run called ``name`` (a NotebookError naming the known ones when none is), or the latest."""
        if name is None:
            return self.latest
        run = self.by_job.get(name)
        if run is None:
            known = ", ".join(repr(n) for n in self.by_job) or "none yet"
            raise NotebookError(f"{magic}: no job named {name!r} has run in this notebook (jobs: {known})")
        return run

    def selected(self, name: str | None) -> list[JobRun]:
        """The run called ``name`` (none when there is no such run), or every run."""
        if name is None:
            return list(self.by_job.values())
        run = self.by_job.get(name)
        return [run] if run is not None else []

    def with_store(self, store: str = "") -> JobRun | None:
        """The latest run whose config has ``store`` (else the latest run); None before a first run."""
        for candidate in reversed(self.by_job.values()):
            if store and candidate.job.config.get_str(f"stores.{store}.factory", ""):
                return candidate
        return self.latest


__all__ = ["NotebookRuns"]
