"""The dashboard's HTML, rendered from a JobView: the header (state, processed count, throughput, notes,
errors) and the body (containers, task rows, partitions, event time, decisions, checkpoints).

Pure functions of a :class:`~samza_nb.notebook.display.views.JobView`; :mod:`.dashboard` puts them in
widgets and the static snapshot a finished job leaves behind. CSS classes are listed in :mod:`.dashboard`.
Each section of the body can be folded (``<details class='samza-section'>``) and is never taller than
``SECTION_MAX_HEIGHT`` (it scrolls), so a job of 32 partitions x 3 streams stays a dashboard of a few
hundred pixels. Short sections start open; long ones (many tasks or partitions) start folded once the job
is done. While it runs they stay open: each render replaces the HTML, which would fold again a section the
user just opened."""

from __future__ import annotations

import html

from samza_nb.notebook.display.event_time.views import time_html, time_rows_count
from samza_nb.notebook.display.text_status import control_html, html_table
from samza_nb.notebook.display.view_rows import (
    COMMIT_HEADERS,
    CONTAINER_HEADERS,
    DECISION_HEADERS,
    PARTITION_HEADERS,
    commit_rows,
    container_rows,
    decision_rows,
    is_total_row,
    oldest_text,
    partition_rows,
)
from samza_nb.notebook.display.views import JobView, TaskView, plural, rate_text
from samza_nb.observe.states import ContainerState, RunOutcome

# Colours are JupyterLab's theme variables (light and dark themes alike), with fallbacks for other
# front-ends (a static page, nbconvert).
_STATE_COLOURS = {
    ContainerState.RUNNING: "var(--jp-success-color1, #2a7)",
    RunOutcome.FINISHED: "var(--jp-info-color1, #27a)",
    RunOutcome.FAILED: "var(--jp-error-color1, #b00)",
    RunOutcome.TIMED_OUT: "var(--jp-warn-color1, #a60)",
}
OTHER_STATE_COLOUR = "var(--jp-ui-font-color1, #333)"
ERROR_COLOUR = "var(--jp-error-color1, #b00)"
NOTE_COLOUR = "var(--jp-warn-color1, #a60)"
BAR_EMPTY = "var(--jp-layout-color3, #ddd)"
"""The empty part of a task's in-flight bar: a theme's mid grey (dark in the dark theme, never white)."""
BAR_FULL = "var(--jp-success-color1, #2a7)"

SECTION_MAX_HEIGHT = "240px"
"""The most a section of the body takes on the page; longer ones scroll."""

FILL_WIDTH = "width:0;min-width:100%"
"""A section's content fills the dashboard's width and scrolls sideways within it: its tables' widths do not
widen the dashboard past the page (at 1,280 px a wide table pushed the whole dashboard, lines and all, past
the output area's edge)."""

OPEN_ROWS = 12
"""Sections of at most this many rows start open; longer ones start folded (a click opens them)."""


def collapsible(
    css_class: str,
    title: str,
    body: str,
    rows: int,
    *,
    live: bool = False,
    max_height: str | None = SECTION_MAX_HEIGHT,
) -> str:
    """A foldable section (``<details>``) titled ``title`` in a ``div`` of ``css_class``, its content
    scrolling past ``max_height`` (None: the body's own boxes scroll, as the event time section's tables
    do) and sideways past the dashboard's width (:data:`FILL_WIDTH`): open when it has at most
    :data:`OPEN_ROWS` rows or is ``live`` (re-rendered a few times a second), folded otherwise."""
    opened = " open" if live or rows <= OPEN_ROWS else ""
    height = f"max-height:{max_height};" if max_height is not None else ""
    return (
        f"<div class='{css_class}'><details class='samza-section'{opened}>"
        f"<summary><b>{html.escape(title)}</b></summary>"
        f"<div style='{height}overflow:auto;{FILL_WIDTH}'>{body}</div>"
        "</details></div>"
    )


def task_row_html(task: TaskView) -> str:
    """One task's row: its name, a bar of callbacks in flight out of ``task.max.concurrency``, and the
    in-flight count, processed messages, the peak in flight, the oldest message in flight with the
    checkpointed offset of its partition (while any is in flight) and phase as text."""
    maximum = max(task.max_concurrency, 1)
    percent = 100 * min(task.in_flight, maximum) // maximum
    bar = (
        f"<span class='samza-in-flight-bar' style='display:inline-block;width:160px;height:10px;"
        f"background:{BAR_EMPTY};margin:0 8px;vertical-align:middle'><span class='samza-in-flight' "
        f"style='display:block;width:{percent}%;height:10px;background:{BAR_FULL}'></span></span>"
    )
    oldest = ""
    if task.oldest_in_flight is not None:
        checkpointed = task.checkpointed if task.checkpointed is not None else "none yet"
        oldest = (
            f" · <span class='samza-oldest-in-flight'>oldest in flight {html.escape(oldest_text(task))}, "
            f"checkpointed {html.escape(checkpointed)}</span>"
        )
    detail = (
        f"{task.in_flight}/{task.max_concurrency} in flight · {task.processed:,} processed · "
        f"peak {task.peak_in_flight}/{task.max_concurrency}{oldest} · {html.escape(task.phase)}"
    )
    return (
        f"<div class='samza-task-row' data-task='{html.escape(task.name)}' style='white-space:normal'>"
        f"<span style='white-space:nowrap'><b style='display:inline-block;width:120px'>"
        f"{html.escape(task.name)}</b>{bar}</span><span class='samza-task-detail'>{detail}</span></div>"
    )


def header_html(view: JobView) -> str:
    """Job, state, mode, processed count (``samza-processed``), throughput (``4,100 msg/s now · avg
    3,900 msg/s`` while running, the average once done), elapsed time; errors and notes below."""
    colour = _STATE_COLOURS.get(view.state, OTHER_STATE_COLOUR)
    lines = [
        f"<b>job {html.escape(view.job)}</b> — <span class='samza-state' style='color:{colour}'>"
        f"{html.escape(view.state)}</span> ({html.escape(view.mode)}) · "
        f"<span class='samza-processed'><b>{view.processed:,}</b> processed</span> · "
        f"<span class='samza-rate'>{html.escape(rate_text(view))}</span> · {view.elapsed_s:.1f} s"
    ]
    if view.error:
        lines.append(f"<div class='samza-error' style='color:{ERROR_COLOUR}'>{html.escape(view.error)}</div>")
    lines.extend(f"<div>{html.escape(line)}</div>" for line in view.restores)
    lines.extend(
        f"<div class='samza-note' style='color:{NOTE_COLOUR}'>{html.escape(line)}</div>"
        for line in view.notes
    )
    return "".join(lines)


def body_html(view: JobView) -> str:
    """The container processes (a job of several), task rows, the partitions table (each stream's totals
    first), event time (a job running an application: :mod:`.event_time.views`), recent decisions and the
    checkpoint history, each a foldable section (long ones folded once the job is done)."""
    live = not view.done
    parts = []
    if view.containers:
        table = html_table(CONTAINER_HEADERS, container_rows(view))
        parts.append(collapsible("samza-containers", "containers", table, len(view.containers), live=live))
    if view.tasks:
        rows = "".join(task_row_html(task) for task in view.tasks)
        title = plural(len(view.tasks), "task")
        parts.append(collapsible("samza-tasks", title, rows, len(view.tasks), live=live))
        partitions = partition_rows(view)
        table = html_table(PARTITION_HEADERS, partitions, strong=is_total_row)
        title = f"partitions ({len(view.partitions):,})"
        parts.append(collapsible("samza-partitions", title, table, len(partitions), live=live))
    parts.extend(control_html(view))
    if view.time is not None:
        body, count = time_html(view.time), time_rows_count(view.time)
        parts.append(collapsible("samza-time", "event time", body, count, live=live, max_height=None))
    if view.decisions:
        decisions = decision_rows(view)[:8]
        table = html_table(DECISION_HEADERS, decisions)
        title = "recent chooser decisions (sampled)"
        parts.append(collapsible("samza-decisions", title, table, len(decisions), live=live))
    if view.commit_count:
        title = f"checkpoints ({view.commit_count:,} written, latest first)"
        commits = commit_rows(view)[:8]
        table = html_table(COMMIT_HEADERS, commits)
        parts.append(collapsible("samza-checkpoints", title, table, len(commits), live=live))
    parts.append(messages_html(view, live=live))
    parts.append(stores_html(view, live=live))
    return "".join(parts)


# -- live samples: messages in and out of the tasks, store tables ------------------------------------------
MESSAGE_HEADERS = ("t (s)", "task", "", "where", "key", "value")
MESSAGES_PER_TASK = 6


def messages_html(view: JobView, per_task: int = MESSAGES_PER_TASK, *, live: bool = False) -> str:
    """A sample of the messages flowing into and out of each task (``samza-messages``): per task, in task
    order, its newest ``per_task`` sampled messages; nothing before the first sample."""
    if not view.messages:
        return ""
    by_task: dict[str, list[tuple[str, ...]]] = {}
    for m in view.messages:  # newest first
        rows = by_task.setdefault(m.task, [])
        if len(rows) < per_task:
            arrow = "→ in" if m.direction == "in" else "out →"
            rows.append((f"{m.at_s:.3f}", m.task, arrow, m.where, m.key, m.value))
    order = {task.name: i for i, task in enumerate(view.tasks)}
    tasks = sorted(by_task, key=lambda name: (order.get(name, len(order)), name))
    rows = [row for task in tasks for row in by_task[task]]
    title = "messages in and out (sampled, newest first)"
    return collapsible("samza-messages", title, html_table(MESSAGE_HEADERS, rows), len(rows), live=live)


def stores_html(view: JobView, *, live: bool = False) -> str:
    """Each store's contents as last committed (``samza-stores``): its first rows and how many it holds;
    nothing for a job without stores or before its first commit."""
    if not view.stores:
        return ""
    parts = []
    for table in view.stores:
        count = f"{table.total:,} row{'' if table.total == 1 else 's'}"
        shown = f", the first {len(table.rows)} shown" if len(table.rows) < table.total else ""
        title = f"store {table.store}: {count} at the commit of {table.at_s:.1f} s{shown}"
        body = html_table(table.columns, table.rows)
        parts.append(collapsible("samza-store", title, body, len(table.rows), live=live))
    return f"<div class='samza-stores'>{''.join(parts)}</div>"


__all__ = [
    "OPEN_ROWS",
    "SECTION_MAX_HEIGHT",
    "body_html",
    "collapsible",
    "header_html",
    "messages_html",
    "stores_html",
    "task_row_html",
]
