"""The live dashboard of a notebook job (ipywidgets), rendered from the monitor's JobViews.

It shows the job's state, processed count and throughput; per task a row with the callbacks in flight
against ``task.max.concurrency``; per input partition the processed, committed and head offsets with lag
and end-of-stream; the recent chooser decisions with their reasons; the checkpoint history; and a Stop
button for a job on the kernel's loop. :meth:`Dashboard.render` is called a few times a second at most
(by the monitor's timer, or by the cell waiting for the job) and only sends what changed, so it never
holds the job up. Front-ends without widgets show the text status it carries as ``text/plain``.

CSS classes for tests and styling: ``samza-dashboard``, ``samza-header`` (``samza-state``,
``samza-processed``, ``samza-error``), ``samza-body`` (``samza-containers`` for a job of several
container processes, ``samza-tasks`` of ``samza-task-row`` with
``data-task``, ``samza-in-flight`` and ``samza-task-detail``; ``samza-partitions``, ``samza-watermarks``
and ``samza-end-of-stream`` (applications of the high-level API), ``samza-decisions``,
``samza-checkpoints``).
"""

from __future__ import annotations

import html
import importlib
import importlib.util
from collections.abc import Callable
from typing import Any

from samza_nb.notebook.text_status import control_html, html_table, render_text, section
from samza_nb.notebook.views import (
    COMMIT_HEADERS,
    CONTAINER_HEADERS,
    DECISION_HEADERS,
    PARTITION_HEADERS,
    JobView,
    TaskView,
    commit_rows,
    container_rows,
    decision_rows,
    partition_rows,
)

_STATE_COLOURS = {"running": "#2a7", "finished": "#27a", "failed": "#b00", "timed out": "#a60"}


def widgets_available() -> bool:
    """True when ipywidgets can be imported."""
    return importlib.util.find_spec("ipywidgets") is not None


def _widgets() -> Any:
    # ipywidgets ships no type information: it is used as Any here, on purpose.
    return importlib.import_module("ipywidgets")


def task_row_html(task: TaskView) -> str:
    """One task's row: its name, a bar of callbacks in flight out of ``task.max.concurrency``, and the
    in-flight count, processed messages and phase as text."""
    maximum = max(task.max_concurrency, 1)
    percent = 100 * min(task.in_flight, maximum) // maximum
    bar = (
        "<span style='display:inline-block;width:160px;height:10px;background:#e4e4e4;margin:0 8px;"
        f"vertical-align:middle'><span class='samza-in-flight' style='display:block;width:{percent}%;"
        "height:10px;background:#2a7'></span></span>"
    )
    detail = (
        f"{task.in_flight}/{task.max_concurrency} in flight · {task.processed:,} processed · "
        f"{html.escape(task.phase)}"
    )
    return (
        f"<div class='samza-task-row' data-task='{html.escape(task.name)}'>"
        f"<b style='display:inline-block;width:120px'>{html.escape(task.name)}</b>{bar}"
        f"<span class='samza-task-detail'>{detail}</span></div>"
    )


class Dashboard:
    """The widgets of one job's dashboard: ``header`` (state, processed count, throughput, errors) and
    ``body`` (task rows, partitions, decisions, checkpoints), both HTML, plus ``stop_button`` for a job on
    the kernel's loop. ``widget`` is the root; ``task_rows`` maps task names to the TaskView their row
    shows; ``renders`` counts renders that changed anything.

    Every widget exists before the job starts and a render sets at most two values: creating widgets
    while the job runs would take tens of ms from it, and each value sent costs the loop a little."""

    def __init__(self, job: str, *, on_stop: Callable[[], None] | None = None) -> None:
        w = _widgets()
        self.job = job
        self.view: JobView | None = None
        self.header = w.HTML(value=f"<b>job {html.escape(job)}</b> — starting")
        self.header.add_class("samza-header")
        self.body = w.HTML(value="")
        self.body.add_class("samza-body")
        self.task_rows: dict[str, TaskView] = {}
        self.stop_button: Any = None
        top = [self.header]
        if on_stop is not None:
            self.stop_button = w.Button(
                description="Stop", tooltip="stop gracefully (commits)", layout=w.Layout(width="80px")
            )
            stop = on_stop

            def clicked(_button: Any) -> None:
                self.stop_button.disabled = True
                stop()

            self.stop_button.on_click(clicked)
            top.append(self.stop_button)
        self.widget = w.VBox([w.HBox(top, layout=w.Layout(align_items="center", grid_gap="12px")), self.body])
        self.widget.add_class("samza-dashboard")
        self.renders = 0

    def render(self, view: JobView) -> None:
        """Show ``view``. Cheap: at most two values are sent, and only when they changed."""
        self.view = view
        changed = self._set(self.header, header_html(view))
        self.task_rows = {task.name: task for task in view.tasks}
        changed |= self._set(self.body, body_html(view))
        if view.done and self.stop_button is not None and not self.stop_button.disabled:
            self.stop_button.disabled = True
        if changed:
            self.renders += 1

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
        bundle: dict[str, Any] = dict(self.widget._repr_mimebundle_(**kwargs))
        bundle["text/plain"] = self.text
        return bundle


def header_html(view: JobView) -> str:
    """Job, state, mode, processed count (``samza-processed``), throughput, elapsed time; errors below."""
    colour = _STATE_COLOURS.get(view.state, "#555")
    lines = [
        f"<b>job {html.escape(view.job)}</b> — <span class='samza-state' style='color:{colour}'>"
        f"{html.escape(view.state)}</span> ({html.escape(view.mode)}) · "
        f"<span class='samza-processed'><b>{view.processed:,}</b> processed</span> · "
        f"{view.rate:,.0f} msg/s · {view.elapsed_s:.1f} s"
    ]
    if view.error:
        lines.append(f"<div class='samza-error' style='color:#b00'>{html.escape(view.error)}</div>")
    lines.extend(f"<div>{html.escape(line)}</div>" for line in (*view.restores, *view.notes))
    return "".join(lines)


def body_html(view: JobView) -> str:
    """The container processes (a job of several), task rows, the partitions table, recent decisions and
    the checkpoint history."""
    parts = []
    if view.containers:
        table = html_table(CONTAINER_HEADERS, container_rows(view))
        parts.append(f"<div class='samza-containers'>{section('containers', table)}</div>")
    if view.tasks:
        rows = "".join(task_row_html(task) for task in view.tasks)
        parts.append(f"<div class='samza-tasks'>{rows}</div>")
        table = html_table(PARTITION_HEADERS, partition_rows(view))
        parts.append(f"<div class='samza-partitions'>{section('partitions', table)}</div>")
    parts.extend(control_html(view))
    if view.decisions:
        table = html_table(DECISION_HEADERS, decision_rows(view)[:8])
        parts.append(
            f"<div class='samza-decisions'>{section('recent chooser decisions (sampled)', table)}</div>"
        )
    if view.commit_count:
        title = f"checkpoints ({view.commit_count} written, latest first)"
        table = html_table(COMMIT_HEADERS, commit_rows(view)[:8])
        parts.append(f"<div class='samza-checkpoints'>{section(title, table)}</div>")
    return "".join(parts)


__all__ = ["Dashboard", "body_html", "header_html", "task_row_html", "widgets_available"]
