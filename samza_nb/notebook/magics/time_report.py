"""``%samza_time``: the event time of a job as a report (text, or HTML in a notebook), the same tables as the
dashboard's "event time" section (:mod:`~samza_nb.notebook.display.event_time.views`)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from samza_nb.notebook.display.event_time.views import TimeView, time_html, time_text
from samza_nb.notebook.errors import NotebookError

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


def time_report(run: JobRun) -> TimeReport:
    """The event time of ``run`` now; a NotebookError for a job without event time (a task's job, a job of
    several containers)."""
    view = run.view
    if view.time is None:
        if view.containers:
            raise NotebookError(
                f"samza_time: job {view.job!r} runs as several containers: the event time view covers a job "
                "of one container in this kernel (job.container.count = 1, --runner local)"
            )
        raise NotebookError(
            f"samza_time: job {view.job!r} runs a task, not an application: watermarks and windows live in "
            "the operators of a %%samza_app (or app.class)"
        )
    return TimeReport(view.job, str(view.state), view.time)


__all__ = ["TimeReport", "time_report"]
