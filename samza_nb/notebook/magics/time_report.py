"""``%samza_time``: the event time of a job as a report (text, or HTML in a notebook), the same tables as the
dashboard's "event time" section (:mod:`~samza_nb.notebook.display.event_time.views`)."""

from __future__ import annotations

import html
import time
import weakref
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.notebook.display.event_time.sampler import TimeViews
from samza_nb.notebook.display.event_time.views import TimeView, time_html, time_text
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.runs.store_lookup import coordinator_of
from samza_nb.operators.impl.time_probe import ContainerTime, time_of_json

if TYPE_CHECKING:
    from samza_nb.notebook.runs.job import JobRun


class TimeReport:
    """What ``%samza_time`` returns: the job's event time when the report was made. ``time`` is the
    :class:`TimeView` (``time.holding_back`` names the partitions holding back a watermark), for
    assertions in cells."""

    def __init__(self, job: str, state: str, time: TimeView) -> None:
        self.job = job
        self.state = state
        self.time = time

    @property
    def title(self) -> str:
        """``event time of job 'clicks' (running)``."""
        return f"event time of job {self.job!r} ({self.state})"

    def __str__(self) -> str:
        return f"{self.title}\n{time_text(self.time)}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        return f"<div class='samza-time'><b>{html.escape(self.title)}</b>{time_html(self.time)}</div>"


_JOBS: weakref.WeakKeyDictionary[JobRun, TimeViews] = weakref.WeakKeyDictionary()
"""The views of each job of several containers (what they keep between two ``%samza_time``)."""


def time_report(run: JobRun) -> TimeReport:
    """The event time of ``run`` now; a NotebookError for a job without event time (a task's job). A job
    of several containers (processes, Spark) is asked through its job coordinator, which asks each
    container (:meth:`~samza_nb.coordinator.store_queries.StoreQueries.times`)."""
    view = run.view
    if view.time is None and view.containers and not run.done:
        several = _several(run)
        if several is not None:
            return TimeReport(view.job, str(view.state), several)
    if view.time is None:
        raise NotebookError(
            f"samza_time: job {view.job!r} runs a task, not an application: watermarks and windows live in "
            "the operators of a %%samza_app (or app.class)"
        )
    return TimeReport(view.job, str(view.state), view.time)


def _several(run: JobRun) -> TimeView | None:
    """The event time of a running job of several containers (None: it runs no application)."""
    try:
        coordinator = coordinator_of(run, "samza_time")
        if coordinator is None:
            return None
        times = coordinator.queries.times()
    except NotebookError:
        raise
    except SamzaError as exc:
        raise NotebookError(f"samza_time: {exc}") from None
    views = _JOBS.get(run)
    if views is None:
        views = _JOBS[run] = TimeViews()
    try:
        union = ContainerTime.union(time_of_json(data) for data in times.values())
    except SamzaError as exc:
        raise NotebookError(f"samza_time: {exc}") from None
    return views.build(union, time.time() * 1000.0)


__all__ = ["TimeReport", "time_report"]
