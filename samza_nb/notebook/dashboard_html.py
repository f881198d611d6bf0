"""The dashboard's HTML, rendered from a JobView: the header (state, processed count, throughput, errors)
and the body (containers, task rows, partitions, event time, decisions, checkpoints).

Pure functions of a :class:`~samza_nb.notebook.views.JobView`; :mod:`.dashboard` puts them in widgets and
the static snapshot a finished job leaves behind. CSS classes are listed in :mod:`.dashboard`.
"""

from __future__ import annotations

import html

from samza_nb.notebook.text_status import control_html, html_table, section
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
    parts.append(messages_html(view))
    parts.append(stores_html(view))
    return "".join(parts)


# -- live samples: messages in and out of the tasks, store tables ------------------------------------------
MESSAGE_HEADERS = ("t (s)", "task", "", "where", "key", "value")
MESSAGES_PER_TASK = 6


def messages_html(view: JobView, per_task: int = MESSAGES_PER_TASK) -> str:
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
    table = html_table(MESSAGE_HEADERS, [row for task in tasks for row in by_task[task]])
    title = "messages in and out (sampled, newest first)"
    return f"<div class='samza-messages'>{section(title, table)}</div>"


def stores_html(view: JobView) -> str:
    """Each store's contents as last committed (``samza-stores``): its first rows and how many it holds;
    nothing for a job without stores or before its first commit."""
    if not view.stores:
        return ""
    parts = []
    for table in view.stores:
        count = f"{table.total:,} row{'' if table.total == 1 else 's'}"
        shown = f", the first {len(table.rows)} shown" if len(table.rows) < table.total else ""
        title = f"store {table.store}: {count} at the commit of {table.at_s:.1f} s{shown}"
        parts.append(section(title, html_table(table.columns, table.rows)))
    return f"<div class='samza-stores'>{''.join(parts)}</div>"


__all__ = ["body_html", "header_html", "messages_html", "stores_html", "task_row_html"]
