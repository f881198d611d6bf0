"""The rows every report of a job shows, as plain strings: the text status, the HTML status, the
dashboard and the checkpoint report all render these from a
:class:`~samza_nb.notebook.display.views.JobView`, so they always agree."""

from __future__ import annotations

import html
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from samza_nb.notebook.display.views import (
    CommitView,
    EndOfStreamView,
    JobView,
    PartitionView,
    TaskView,
    plural,
    rate_text,
)

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStream


# -- tables -----------------------------------------------------------------------------------------------
def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A left-aligned plain-text table (two spaces between columns)."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
        for line in (headers, *rows)
    ]
    return "\n".join(lines)


_TH = "<th style='text-align:left;padding:0 8px;white-space:nowrap'>"
_TD = "<td style='padding:0 8px;white-space:nowrap'>"
_TR_STRONG = "<tr style='font-weight:bold'>"

WRAP_MIN_WIDTH = "10em"
"""The narrowest a wrapping column (``html_table``'s ``wrap``) gets: a few words a line."""
_TD_WRAP = (
    f"<td style='padding:0 8px;white-space:normal;min-width:{WRAP_MIN_WIDTH};overflow-wrap:break-word'>"
)


def html_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    css_class: str = "",
    strong: Callable[[Sequence[str]], bool] | None = None,
    wrap: Collection[int] = (),
) -> str:
    """A small HTML table; every cell escaped and kept on one line (no mid-word wrapping), except in the
    columns (indexes) of ``wrap``, whose long cells (a note) wrap between words, never narrower than
    :data:`WRAP_MIN_WIDTH`; rows for which ``strong`` is true are bold (a stream's totals)."""
    head = "".join(f"{_TH}{html.escape(h)}</th>" for h in headers)
    body = "".join(
        (_TR_STRONG if strong is not None and strong(row) else "<tr>")
        + "".join(f"{_TD_WRAP if i in wrap else _TD}{html.escape(cell)}</td>" for i, cell in enumerate(row))
        + "</tr>"
        for row in rows
    )
    cls = f" class='{html.escape(css_class)}'" if css_class else ""
    style = "border-collapse:collapse;font-size:var(--jp-ui-font-size1, 13px)"
    return f"<table{cls} style='{style}'><tr>{head}</tr>{body}</table>"


# -- rows -----------------------------------------------------------------------------------------------
TASK_HEADERS = ("task", "in flight", "peak", "processed", "oldest in flight", "checkpointed", "phase")
PARTITION_HEADERS = ("partition", "processed", "last offset", "committed", "head", "lag", "end-of-stream")
DECISION_HEADERS = ("t (s)", "chosen", "tier", "why")
COMMIT_HEADERS = ("t (s)", "task", "offsets")
CONTAINER_HEADERS = ("container", "state", "host", "pid", "processed", "tasks")
END_OF_STREAM_HEADERS = ("task", "intermediate partition", "producers ended", "ended")


def _text(value: object) -> str:
    return "—" if value is None else str(value)


def header_line(view: JobView) -> str:
    """``job 'x' — running (on its own thread) · 1,234 processed · 2 in flight · 5,678 msg/s now · avg
    5,100 msg/s · 1.2 s`` (``avg`` only once the job is done)."""
    parts = [f"{view.processed:,} processed", rate_text(view), f"{view.elapsed_s:.1f} s"]
    if view.in_flight:
        parts.insert(1, f"{view.in_flight} in flight")
    return f"job {view.job!r} — {view.state} ({view.mode}) · " + " · ".join(parts)


def oldest_text(task: TaskView) -> str:
    """``in.clicks#3@120 (45 ms)``: the task's oldest message in flight, or ``—``."""
    oldest = task.oldest_in_flight
    if oldest is None:
        return "—"
    return f"{oldest.ssp}@{oldest.offset} ({oldest.age_ms:,.0f} ms)"


def task_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per task: in flight and the peak against ``task.max.concurrency``, processed count, the
    oldest message in flight and the checkpointed offset of its partition, phase."""
    return [
        (
            task.name,
            f"{task.in_flight}/{task.max_concurrency}",
            f"{task.peak_in_flight}/{task.max_concurrency}",
            f"{task.processed:,}",
            oldest_text(task),
            _text(task.checkpointed),
            task.phase,
        )
        for task in view.tasks
    ]


def _partition_row(p: PartitionView) -> tuple[str, ...]:
    return (
        str(p.ssp),
        f"{p.processed:,}",
        _text(p.processed_offset),
        _text(p.committed),
        _text(p.head),
        _text(p.lag),
        "yes" if p.ended else "no",
    )


def _total_row(stream: SystemStream, partitions: list[PartitionView]) -> tuple[str, ...]:
    lags = [p.lag for p in partitions]
    lag = "—" if any(value is None for value in lags) else f"{sum(value or 0 for value in lags):,}"
    ended = sum(p.ended for p in partitions)
    return (
        f"{stream.system}.{stream.stream} ({plural(len(partitions), 'partition')})",
        f"{sum(p.processed for p in partitions):,}",
        "",
        "",
        "",
        lag,
        "yes" if ended == len(partitions) else f"{ended} of {len(partitions)}",
    )


def partition_rows(view: JobView) -> list[tuple[str, ...]]:
    """Per input stream (in partition order), a row of its totals (processed, lag, partitions ended)
    when it has several partitions, then one row per partition."""
    streams: dict[SystemStream, list[PartitionView]] = {}
    for p in sorted(view.partitions, key=lambda p: p.ssp):
        streams.setdefault(p.ssp.system_stream, []).append(p)
    rows: list[tuple[str, ...]] = []
    for stream, partitions in streams.items():
        if len(partitions) > 1:
            rows.append(_total_row(stream, partitions))
        rows.extend(_partition_row(p) for p in partitions)
    return rows


def is_total_row(row: Sequence[str]) -> bool:
    """True for a stream's totals row of :func:`partition_rows`."""
    return row[0].endswith(" partitions)")


def container_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per container process (none for a job in the kernel's process)."""
    return [
        (
            c.container_id,
            c.state + (f": {c.error}" if c.error else ""),
            _text(c.host),
            _text(c.pid),
            f"{c.processed:,}",
            ", ".join(c.tasks),
        )
        for c in view.containers
    ]


def decision_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per recent chooser decision, newest first."""
    return [(f"{d.at_s:.3f}", f"{d.ssp}@{d.offset}", _text(d.tier), d.reason) for d in view.decisions]


TIMES = "\u00d7"
"""The multiplication sign of a repeated checkpoint's count."""


def commit_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per recent checkpoint of ``view``, newest first (see :func:`checkpoint_rows`)."""
    return checkpoint_rows(view.commits)


def checkpoint_rows(commits: Sequence[CommitView]) -> list[tuple[str, ...]]:
    """One row per checkpoint in ``commits`` (newest first); identical ones in a row are one row (``task
    x3``, with a multiplication sign)."""
    return [
        (
            f"{c.at_s:.3f}",
            c.task + (f" {TIMES}{c.count}" if c.count > 1 else ""),
            ", ".join(f"{ssp}={offset}" for ssp, offset in c.offsets) or "(nothing processed yet)",
        )
        for c in commits
    ]


def end_of_stream_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per task and intermediate partition: producers that ended it (``1 of 2: Partition 0``), or
    that the task reading the aggregation partition said every producer had."""
    return [(e.task, str(e.ssp), _producers_ended(e), "yes" if e.ended else "no") for e in view.end_of_stream]


def _producers_ended(e: EndOfStreamView) -> str:
    if e.ended and len(e.producers_seen) < e.producers_expected:
        return f"all {e.producers_expected} (said the aggregating task)"
    seen = f": {', '.join(e.producers_seen)}" if e.producers_seen else ""
    return f"{len(e.producers_seen)} of {e.producers_expected}{seen}"


__all__ = [
    "COMMIT_HEADERS",
    "CONTAINER_HEADERS",
    "DECISION_HEADERS",
    "END_OF_STREAM_HEADERS",
    "PARTITION_HEADERS",
    "TASK_HEADERS",
    "checkpoint_rows",
    "commit_rows",
    "container_rows",
    "decision_rows",
    "end_of_stream_rows",
    "header_line",
    "html_table",
    "is_total_row",
    "oldest_text",
    "partition_rows",
    "task_rows",
    "text_table",
]
