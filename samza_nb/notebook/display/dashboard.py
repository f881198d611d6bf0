"""The live dashboard of a notebook job (ipywidgets), rendered from the monitor's JobViews.

It shows the job's state, processed count and throughput; per task a row with the callbacks in flight
against ``task.max.concurrency``; per input partition the processed, committed and head offsets with lag
and end-of-stream; the recent chooser decisions with their reasons; the checkpoint history; and a Stop
button (a graceful stop). :meth:`Dashboard.render` is called a few times a second at most
(by the session's one dashboard thread, :mod:`.updater`) and only sends what changed, so it never
holds the job up. Front-ends without widgets show the text status it carries as ``text/plain``.

CSS classes for tests and styling: ``samza-dashboard``, ``samza-header`` (``samza-state``,
``samza-processed``, ``samza-rate``, ``samza-error``, ``samza-note``, ``samza-paused``), ``samza-stop`` (the
Stop button) and, for a job of one container, the steering widgets (:mod:`.steer_controls`),
``samza-chart`` (the live throughput and lag chart), ``samza-body`` (foldable sections, ``samza-section``:
``samza-containers`` for a job of several container processes, ``samza-tasks`` of ``samza-task-row``
with ``data-task``, ``samza-in-flight``, ``samza-task-detail`` and ``samza-oldest-in-flight``;
``samza-partitions``, ``samza-end-of-stream`` and ``samza-time`` (applications of the high-level API:
watermarks, late messages, open windows; the event time section's classes are listed in
:mod:`.event_time.views`), ``samza-decisions``,
``samza-checkpoints``, ``samza-messages`` (sampled messages in and out),
``samza-stores`` (store tables at the latest commit)), ``samza-live-<id>`` on the live root (``id``: the
dashboard's :attr:`Dashboard.id`), and ``samza-snapshot`` (with ``samza-snapshot-<id>``) on the static HTML
that stands for it in a saved notebook (:meth:`Dashboard.snapshot_html`: the chart as a picture with
``samza-chart-picture`` and ``samza-chart-summary``; ``samza-snapshot-note`` says when a job still running
was pictured). :mod:`.dashboard_output` shows both.
"""

from __future__ import annotations

import html
import importlib
import importlib.util
import uuid
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from samza_nb.notebook.display.dashboard_html import body_html, header_html, task_row_html
from samza_nb.notebook.display.text_status import render_text
from samza_nb.notebook.display.views import JobView, TaskView

if TYPE_CHECKING:
    from samza_nb.notebook.display.charts import ThroughputLagChart
    from samza_nb.notebook.display.dashboard_output import DashboardOutput
    from samza_nb.notebook.display.steer_controls import SteerControls


def widgets_available() -> bool:
    """True when ipywidgets can be imported."""
    return importlib.util.find_spec("ipywidgets") is not None


def _widgets() -> Any:
    # ipywidgets ships no type information: it is used as Any here, on purpose.
    return importlib.import_module("ipywidgets")


def _chart() -> ThroughputLagChart | None:
    """The live throughput and lag chart, when bqplot is installed (imported on first use: ~0.5 s)."""
    if importlib.util.find_spec("bqplot") is None:
        return None
    from samza_nb.notebook.display.charts import ThroughputLagChart

    return ThroughputLagChart()


class Dashboard:
    """The widgets of one job's dashboard: ``header`` (state, processed count, throughput, errors) and
    ``body`` (task rows, partitions, decisions, checkpoints), both HTML, plus ``stop_button`` (a graceful
    stop, when ``on_stop`` is given) with the steering ``controls`` (Pause / Step / Resume, the concurrency
    slider; when given) and, below the header, the live throughput and lag ``chart`` (bqplot,
    when installed and ``chart``) and any ``extras`` widgets.
    ``widget`` is the root; ``task_rows`` maps task names to the TaskView their row shows; ``renders``
    counts renders that changed anything.

    Every widget exists before the job starts and a render sets at most two values: creating widgets
    while the job runs would take time from it, and each value sent costs a little. Render from one
    thread at a time (the session's :class:`~samza_nb.notebook.display.updater.DashboardUpdater`)."""

    def __init__(
        self,
        job: str,
        *,
        on_stop: Callable[[], None] | None = None,
        extras: Sequence[Any] = (),
        chart: bool = True,
        controls: SteerControls | None = None,
    ) -> None:
        w = _widgets()
        self.chart = _chart() if chart else None
        if self.chart is not None:
            extras = (*extras, *self.chart.widgets)
        self.job = job
        self.id = uuid.uuid4().hex[:12]
        self.view: JobView | None = None
        self.header = w.HTML(value=f"<b>job {html.escape(job)}</b> — starting")
        self.header.add_class("samza-header")
        self.body = w.HTML(value="")
        self.body.add_class("samza-body")
        self.task_rows: dict[str, TaskView] = {}
        self.stop_button: Any = None
        top = []
        if on_stop is not None:
            self.stop_button = w.Button(
                description="Stop",
                tooltip="stop gracefully (commits)",
                layout=w.Layout(width="80px", min_width="80px", flex="0 0 auto"),
            )
            self.stop_button.add_class("samza-stop")
            stop = on_stop

            def clicked(_button: Any) -> None:
                self.stop_button.disabled = True
                stop()

            self.stop_button.on_click(clicked)
            top.append(self.stop_button)
        self.controls = controls
        if controls is not None:
            top.extend(controls.widgets)
            extras = (controls.note, *extras)
        # The header on a line of its own, the buttons and knobs below it on a row that wraps: no widget
        # shrinks to share a narrow page (at 1,280 px the slider became a dot and "Resume" was cut).
        self._row = w.HBox(
            top,
            layout=w.Layout(align_items="center", flex_flow="row wrap", grid_gap="6px 12px"),
        )
        self._extras = tuple(extras)
        rows = [self.header, self._row] if top else [self.header]
        self.widget = w.VBox([*rows, *extras, self.body])
        self.widget.add_class("samza-dashboard")
        self.widget.add_class(f"samza-live-{self.id}")
        self.renders = 0
        self.closed = False
        self.output: DashboardOutput | None = None
        """Where it shows, with its HTML snapshot (set by :class:`.dashboard_output.DashboardOutput`)."""

    def render(self, view: JobView) -> None:
        """Show ``view``. Cheap: at most two values (and the chart's new point) are sent, and only when
        they changed."""
        self.view = view
        if self.chart is not None:
            self.chart.update(view)
        header = header_html(view)
        if self.controls is not None:
            header += self.controls.header_suffix(view.done)
        changed = self._set(self.header, header)
        self.task_rows = {task.name: task for task in view.tasks}
        changed |= self._set(self.body, body_html(view))
        if view.done and self.stop_button is not None and not self.stop_button.disabled:
            self.stop_button.disabled = True
        if changed:
            self.renders += 1

    def snapshot_html(self, extra: str = "", *, note: str = "") -> str:
        """The latest view as static HTML (CSS classes ``samza-snapshot`` and ``samza-snapshot-<id>``): what a
        saved notebook shows where the widgets are gone. ``extra`` (default: the chart as a picture with
        its summary and the run's average rate) goes below the header; ``note`` (``samza-snapshot-note``),
        when given, above it."""
        if self.view is None:
            inner = f"<b>job {html.escape(self.job)}</b> — not started yet"
        else:
            if not extra and self.chart is not None:
                extra = self.chart.summary_html(self.view.average_rate)
            inner = f"<div class='samza-header'>{header_html(self.view)}</div>{extra}"
            inner += f"<div class='samza-body'>{body_html(self.view)}</div>"
        if note:
            inner = f"<div class='samza-snapshot-note'><i>{html.escape(note)}</i></div>{inner}"
        return f"<div class='samza-dashboard samza-snapshot samza-snapshot-{self.id}'>{inner}</div>"

    def close(self) -> None:
        """Close every widget of the dashboard (their models leave the front-end)."""
        self.closed = True
        for widget in (self.widget, self._row, self.header, self.body, self.stop_button, *self._extras):
            if widget is not None:
                widget.close()
        if self.controls is not None:
            self.controls.close()

    @property
    def text(self) -> str:
        """The latest view as text (what front-ends without widgets show)."""
        if self.view is None:
            return f"job {self.job!r} — starting"
        return render_text(self.view, decisions=3, commits=3)

    @staticmethod
    def _set(widget: Any, value: str) -> bool:
        if widget.value == value:
            return False
        widget.value = value
        return True

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The live widget (its text a pointer to the HTML snapshot shown beside it, see
        :mod:`.dashboard_output`); once closed, the static snapshot."""
        if self.closed:  # the job ended and its widgets are gone: the snapshot
            return {"text/html": self.snapshot_html(), "text/plain": self.text}
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/plain"] = f"(the live dashboard of job {self.job!r}: its snapshot follows)"
        return bundle


__all__ = ["Dashboard", "body_html", "header_html", "task_row_html", "widgets_available"]
