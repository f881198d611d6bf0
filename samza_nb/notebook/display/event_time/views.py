"""Event time as the notebook shows it: the frozen :class:`TimeView` of a job (the dashboard's "event time"
section and ``%samza_time``) and the rows, text and HTML it renders as.

A TimeView is built by :class:`~.sampler.TimeSampler` with every JobView of a
job that runs an application (the high-level API: watermarks live in its operators). Times are ms of
event time; ``-1`` (no watermark yet) shows as ``none yet``.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING

from samza_nb.notebook.display.view_rows import html_table, text_table

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition


@dataclass(frozen=True, slots=True)
class PartitionTimeView:
    """One input partition of a task: its watermark; the newest event time seen on its stream (sampled
    messages and watermarks) and how far the watermark is behind it; seconds since anything (a message
    or a watermark) came from it; each upstream task's latest watermark (an intermediate partition); and
    whether it holds back the watermark of its stream (the lowest of its partitions, below the others)."""

    task: str
    ssp: SystemStreamPartition
    intermediate: bool
    watermark: int
    newest_event: int | None
    behind_ms: int | None
    idle_s: float | None
    producers: tuple[tuple[str, int], ...] = ()
    holds_back: bool = False
    ended: bool = False


@dataclass(frozen=True, slots=True)
class OperatorTimeView:
    """One operator of a task: its input and output watermarks; for a window, the messages it dropped
    as late, the panes it fired and the panes open now."""

    task: str
    op_id: str
    kind: str
    input_watermark: int
    output_watermark: int
    late: int | None = None
    fired: int | None = None
    open_panes: int | None = None


@dataclass(frozen=True, slots=True)
class OpenWindowView:
    """An open pane of a window operator: its key, ``[start, end)``, what it holds so far (a session:
    its message count; a tumbling pane: its accumulator, the count for a counting fold) and when it
    fires."""

    task: str
    op_id: str
    key: str
    start_ms: int
    end_ms: int
    so_far: str
    fires: str


@dataclass(frozen=True, slots=True)
class TimeView:
    """Event time of a job: its input partitions, operators and open windows; ``holding_back`` one line
    per partition that holds back a watermark (naming it, how far behind and for how long nothing came
    from it); ``more_windows`` the open panes not listed."""

    partitions: tuple[PartitionTimeView, ...] = ()
    operators: tuple[OperatorTimeView, ...] = ()
    windows: tuple[OpenWindowView, ...] = ()
    holding_back: tuple[str, ...] = ()
    more_windows: int = 0


def mark(ms: int | None) -> str:
    """An event time in ms as ``2,883``; ``none yet`` for -1 (no watermark yet), ``—`` for None."""
    if ms is None:
        return "—"
    if ms < 0:
        return "none yet"
    return f"{ms:,}"


PARTITION_HEADERS = ("task", "partition", "watermark", "newest", "behind", "last input", "note")
"""``newest``: the newest event time seen on the partition's stream; ``behind``: how far the watermark
trails it; ``last input``: how long ago anything came from the partition."""
OPERATOR_HEADERS = ("task", "operator", "kind", "in", "out", "late", "fired", "open")
"""``in`` and ``out``: the operator's input and output watermarks (the tables' titles say so)."""
WINDOW_HEADERS = ("task", "window", "key", "start", "end", "so far", "fires")
PARTITION_WRAP = (1, 6)
OPERATOR_WRAP = (2,)
WINDOW_WRAP = (6,)
"""The columns of long words (an intermediate partition's name, notes, kinds, when a pane fires) that wrap
in HTML, between words or after a hyphen; the others keep one line."""

PARTITIONS_TITLE = "input partitions (event time in ms)"
OPERATORS_TITLE = "operators: watermarks in and out (ms); a window's late messages, panes fired and open"


def partition_rows(view: TimeView) -> list[tuple[str, ...]]:
    """One row per input partition of each task."""
    rows: list[tuple[str, ...]] = []
    for p in view.partitions:
        notes = []
        if p.holds_back:
            notes.append("holds back the watermark")
        if p.producers:
            notes.append("producers: " + ", ".join(f"{task} {mark(ts)}" for task, ts in p.producers))
        if p.ended:
            notes.append("ended")
        rows.append(
            (
                p.task,
                str(p.ssp),
                mark(p.watermark),
                mark(p.newest_event),
                "—" if p.behind_ms is None else f"{p.behind_ms:,} ms",
                "—" if p.idle_s is None else f"{p.idle_s:.1f} s ago",
                "; ".join(notes),
            )
        )
    return rows


def _count(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def operator_rows(view: TimeView) -> list[tuple[str, ...]]:
    """One row per operator of each task."""
    return [
        (
            o.task,
            o.op_id,
            o.kind,
            mark(o.input_watermark),
            mark(o.output_watermark),
            _count(o.late),
            _count(o.fired),
            _count(o.open_panes),
        )
        for o in view.operators
    ]


def window_rows(view: TimeView) -> list[tuple[str, ...]]:
    """One row per open pane listed, the earliest ending first."""
    return [
        (w.task, w.op_id, w.key, f"{w.start_ms:,}", f"{w.end_ms:,}", w.so_far, w.fires) for w in view.windows
    ]


def _windows_title(view: TimeView) -> str:
    more = f" ({view.more_windows:,} more not listed)" if view.more_windows else ""
    return f"open windows, the earliest ending first{more}"


def time_text(view: TimeView) -> str:
    """The view as text (``%samza_time``)."""
    parts = [*view.holding_back]
    parts += ["", PARTITIONS_TITLE + ":", text_table(PARTITION_HEADERS, partition_rows(view))]
    parts += ["", OPERATORS_TITLE + ":", text_table(OPERATOR_HEADERS, operator_rows(view))]
    if view.windows:
        parts += ["", _windows_title(view) + ":", text_table(WINDOW_HEADERS, window_rows(view))]
    else:
        parts += ["", "open windows: none"]
    return "\n".join(parts).lstrip("\n")


STATUS_NOTE = "operators and open windows: %samza_time"


def time_status_text(view: TimeView) -> str:
    """The view in a job's text status (``%samza_status``): ``event time:``, the partitions holding back a
    watermark and the input partitions' table."""
    table = text_table(PARTITION_HEADERS, partition_rows(view))
    return "\n".join(["event time:", *view.holding_back, table, STATUS_NOTE])


HOLDING_COLOUR = "var(--jp-warn-color1, #a60)"

TABLE_MAX_HEIGHT = "360px"
"""The most one table of the section takes on the page (a dozen rows: the operators of two tasks of a
windowed ``partition_by``); a longer one scrolls (its title stays above)."""
BOX_STYLE = f"max-height:{TABLE_MAX_HEIGHT};overflow:auto;width:0;min-width:100%"
"""A table's box: as wide as the section (``width:0;min-width:100%``: the table never widens the
dashboard), scrolling down past :data:`TABLE_MAX_HEIGHT` and sideways when the table is wider still."""


def _holding_html(view: TimeView) -> list[str]:
    return [
        f"<div class='samza-time-holding' style='color:{HOLDING_COLOUR};white-space:normal'>"
        f"{html.escape(line)}</div>"
        for line in view.holding_back
    ]


def _boxed(title: str, table: str) -> str:
    """``table`` under its ``title``, in a box of its own (``samza-time-box``, :data:`BOX_STYLE`)."""
    return (
        f"<div style='margin-top:4px'><i>{html.escape(title)}</i></div>"
        f"<div class='samza-time-box' style='{BOX_STYLE}'>{table}</div>"
    )


def time_html(view: TimeView) -> str:
    """The view as HTML: the partitions holding back a watermark (``samza-time-holding``), then the tables
    of the input partitions (``samza-time-partitions``), operators (``samza-time-operators``) and open
    windows (``samza-time-windows``), each titled in a box of its own that scrolls sideways when it is
    wider than the section (long notes wrap first)."""
    parts = _holding_html(view)
    table = html_table(PARTITION_HEADERS, partition_rows(view), "samza-time-partitions", wrap=PARTITION_WRAP)
    parts.append(_boxed(PARTITIONS_TITLE, table))
    table = html_table(OPERATOR_HEADERS, operator_rows(view), "samza-time-operators", wrap=OPERATOR_WRAP)
    parts.append(_boxed(OPERATORS_TITLE, table))
    if view.windows:
        table = html_table(WINDOW_HEADERS, window_rows(view), "samza-time-windows", wrap=WINDOW_WRAP)
        parts.append(_boxed(_windows_title(view), table))
    else:
        parts.append("<div class='samza-time-windows'><i>open windows: none</i></div>")
    return "".join(parts)


def time_status_html(view: TimeView) -> str:
    """The view in a job's HTML status (``%samza_status``): the partitions holding back a watermark and the
    input partitions' table."""
    table = html_table(PARTITION_HEADERS, partition_rows(view), "samza-time-partitions", wrap=PARTITION_WRAP)
    note = f"<div><i>{html.escape(STATUS_NOTE)}</i></div>"
    return "".join([*_holding_html(view), _boxed(PARTITIONS_TITLE, table), note])


def time_rows_count(view: TimeView) -> int:
    """How many rows the view's tables hold (for folding it)."""
    return len(view.partitions) + len(view.operators) + len(view.windows)


__all__ = [
    "OPERATOR_HEADERS",
    "PARTITION_HEADERS",
    "WINDOW_HEADERS",
    "OpenWindowView",
    "OperatorTimeView",
    "PartitionTimeView",
    "TimeView",
    "mark",
    "operator_rows",
    "partition_rows",
    "time_html",
    "time_rows_count",
    "time_status_html",
    "time_status_text",
    "time_text",
    "window_rows",
]
