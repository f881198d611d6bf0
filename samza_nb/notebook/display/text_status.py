"""Job status as text and as static HTML: the degraded dashboard and the ``%samza_status`` report.

Where widgets are not available (a terminal IPython, a static renderer, no ipywidgets) the notebook shows
these instead; the dashboard's tables use the same HTML, so both views always agree.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from samza_nb.notebook.display.event_time.views import time_status_html, time_status_text
from samza_nb.notebook.display.view_rows import (
    COMMIT_HEADERS,
    CONTAINER_HEADERS,
    DECISION_HEADERS,
    END_OF_STREAM_HEADERS,
    PARTITION_HEADERS,
    TASK_HEADERS,
    commit_rows,
    container_rows,
    decision_rows,
    end_of_stream_rows,
    header_line,
    html_table,
    is_total_row,
    partition_rows,
    task_rows,
    text_table,
)
from samza_nb.notebook.display.views import JobView, plural, rate_text


def render_text(view: JobView, *, decisions: int = 5, commits: int = 5) -> str:
    """The whole view as text: header, tasks, partitions, recent decisions and checkpoints, error."""
    parts = [header_line(view)]
    if view.error:
        parts.append(f"error: {view.error}")
    parts.extend(view.restores)
    parts.extend(view.notes)
    if view.containers:
        parts += ["", text_table(CONTAINER_HEADERS, container_rows(view))]
    if view.tasks:
        parts += ["", text_table(TASK_HEADERS, task_rows(view))]
        parts += ["", text_table(PARTITION_HEADERS, partition_rows(view))]
    if view.time is not None:
        parts += ["", time_status_text(view.time)]
    if view.end_of_stream:
        parts += [
            "",
            "end-of-stream of intermediate partitions:",
            text_table(END_OF_STREAM_HEADERS, end_of_stream_rows(view)),
        ]
    if view.decisions and decisions:
        parts += [
            "",
            "recent chooser decisions (sampled):",
            text_table(DECISION_HEADERS, decision_rows(view)[:decisions]),
        ]
    if view.commit_count and commits:
        parts += [
            "",
            f"checkpoints ({view.commit_count:,} written, latest first):",
            text_table(COMMIT_HEADERS, commit_rows(view)[:commits]),
        ]
    return "\n".join(parts)


def section(title: str, body: str) -> str:
    """A titled block of HTML."""
    return f"<div style='margin-top:4px'><b>{html.escape(title)}</b>{body}</div>"


def control_html(view: JobView) -> list[str]:
    """The end-of-stream count of each intermediate partition, naming the upstream producers that ended it
    (``samza-end-of-stream``): nothing for a job without them. (Watermarks are the event time section's.)"""
    parts = []
    if view.end_of_stream:
        table = html_table(END_OF_STREAM_HEADERS, end_of_stream_rows(view))
        title = "end-of-stream of intermediate partitions"
        parts.append(f"<div class='samza-end-of-stream'>{section(title, table)}</div>")
    return parts


def render_html(view: JobView, *, decisions: int = 5, commits: int = 5) -> str:
    """The whole view as static HTML (for ``%samza_status`` and front-ends without widgets)."""
    parts = [f"<div><b>{html.escape(header_line(view))}</b></div>"]
    if view.error:
        parts.append(f"<div style='color:#b00'>error: {html.escape(view.error)}</div>")
    parts.extend(f"<div>{html.escape(line)}</div>" for line in (*view.restores, *view.notes))
    if view.containers:
        parts.append(section("containers", html_table(CONTAINER_HEADERS, container_rows(view))))
    if view.tasks:
        parts.append(section("tasks", html_table(TASK_HEADERS, task_rows(view))))
        table = html_table(PARTITION_HEADERS, partition_rows(view), strong=is_total_row)
        parts.append(section("partitions", table))
    if view.time is not None:
        parts.append(f"<div class='samza-time'>{section('event time', time_status_html(view.time))}</div>")
    parts.extend(control_html(view))
    if view.decisions and decisions:
        parts.append(
            section(
                "recent chooser decisions (sampled)",
                html_table(DECISION_HEADERS, decision_rows(view)[:decisions]),
            )
        )
    if view.commit_count and commits:
        parts.append(
            section(
                f"checkpoints ({view.commit_count:,} written, latest first)",
                html_table(COMMIT_HEADERS, commit_rows(view)[:commits]),
            )
        )
    return "<div class='samza-status'>" + "".join(parts) + "</div>"


class StatusReport:
    """What ``%samza_status`` returns: the job's latest view, shown as a table (HTML or text).

    ``state``, ``processed`` and ``view`` are there for assertions in cells.
    """

    def __init__(self, view: JobView | None, lines: Sequence[str] = ()) -> None:
        self.view = view
        self.lines = tuple(lines)

    @property
    def state(self) -> str:
        """The job's state or outcome (``"no job"`` before the first run)."""
        return self.view.state if self.view is not None else "no job"

    @property
    def processed(self) -> int:
        """Messages processed by the latest run."""
        return self.view.processed if self.view is not None else 0

    def __str__(self) -> str:
        body = render_text(self.view) if self.view is not None else ""
        return "\n".join(part for part in (*self.lines, body) if part)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        lines = "".join(f"<div>{html.escape(line)}</div>" for line in self.lines)
        return lines + (render_html(self.view) if self.view is not None else "")


def outcome_line(view: JobView) -> str:
    """``job 'x' finished: 6 messages in 0.05 s (avg 120 msg/s); every input reached end-of-stream;
    ...``: the line a job's end is reported with."""
    line = (
        f"job {view.job!r} {view.state}: {plural(view.processed, 'message')} in {view.elapsed_s:.2f} s "
        f"({rate_text(view)})"
    )
    partitions = view.partitions
    if partitions and all(p.ended for p in partitions):
        line += "; every input reached end-of-stream"
    if view.commit_count:
        line += f"; {plural(view.commit_count, 'checkpoint')} written"
    if view.error:
        line += f"; {view.error}"
    return line


__all__ = [
    "StatusReport",
    "control_html",
    "html_table",
    "outcome_line",
    "render_html",
    "render_text",
    "section",
    "text_table",
]
