"""The live dashboard of one run (``%samza_run --ui widgets``): made before the run starts, with the
steering controls when the job runs in one container of the kernel, then watched by the notebook's one
dashboard thread (:mod:`.display.updater`) until the run ends; in a front-end that displays widgets, its
static HTML snapshot then stands for it in a saved notebook (:mod:`.display.dashboard_output`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samza_nb.container.container import SamzaContainer
from samza_nb.notebook.display.dashboard import Dashboard
from samza_nb.notebook.display.dashboard_output import DashboardOutput
from samza_nb.notebook.display.steer_controls import SteerControls
from samza_nb.notebook.runs.steering import NotebookJob

if TYPE_CHECKING:
    from samza_nb.notebook.display.updater import DashboardUpdater
    from samza_nb.notebook.display.views import JobView
    from samza_nb.notebook.runs.job import JobRun


class RunDashboard:
    """The dashboard of a run of ``job`` (``runnable`` is what the run will run; ``display`` shows a rich
    object, None outside a front-end). Its Stop button and steering controls act on the run given to
    :meth:`attach`, and do nothing before."""

    def __init__(self, job: str, runnable: Any, display: Callable[..., Any] | None) -> None:
        self._run: JobRun | None = None
        controls = None
        if isinstance(runnable, SamzaContainer):  # steering reaches a job of one container
            concurrency = runnable.config.get_int("task.max.concurrency", 1)
            controls = SteerControls(
                lambda: NotebookJob(self._run) if self._run is not None else None, concurrency
            )
        self.dashboard = Dashboard(
            job, on_stop=lambda: self._run.stop() if self._run is not None else None, controls=controls
        )
        self.output = DashboardOutput(self.dashboard, display) if display is not None else None

    def attach(self, run: JobRun, updater: DashboardUpdater, view_of: Callable[[JobRun], JobView]) -> None:
        """``run`` started: the dashboard acts on it and ``updater`` keeps it showing ``view_of(run)`` until
        it ends (then the widgets give way to their snapshot, or close)."""
        self._run = run
        if self.output is not None:  # the widgets, and their HTML snapshot for a saved notebook
            updater.watch(run, self.dashboard, self.output.end, view_of, self.output.refresh)
        else:
            updater.watch(run, self.dashboard, lambda _run, d: d.close(), view_of)


__all__ = ["RunDashboard"]
