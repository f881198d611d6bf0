"""What one operator task knows of event time now: each input partition's watermark (an intermediate
partition's with every upstream task's latest), each operator's input and output watermarks, and each
window operator's late messages and open panes.

:func:`task_time` reads the task's operators as they are (call it on the thread that runs the task: the
job's loop thread for a task without a thread pool) and copies what it shows into frozen values, so a
dashboard may keep them. It reads at most ``limit`` open panes per window operator, the earliest ending
first (the total is counted), so a window of a million keys costs a dashboard as much as one of twenty.
Nothing here runs per message.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.operators.impl.window import SessionWindowImpl, TumblingWindowImpl, WindowImpl

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.operators.impl.control import ControlFlow
    from samza_nb.operators.impl.graph import TaskGraph

PANES_SHOWN = 20
"""The most open panes :func:`task_time` copies per window operator (the earliest ending)."""


@dataclass(frozen=True, slots=True)
class InputTime:
    """One input partition of the task: its watermark (ms of event time; -1 while unknown) and, for a
    partition of an intermediate stream, each upstream task's latest watermark (its producers)."""

    ssp: SystemStreamPartition
    intermediate: bool
    watermark: int
    producers: tuple[tuple[str, int], ...] = ()
    producers_expected: int = 1


@dataclass(frozen=True, slots=True)
class PaneTime:
    """An open pane of a window: its key, ``[start_ms, end_ms)``, the accumulator so far (``value``) and,
    for a session, how many messages it holds (``count``; None for a tumbling pane, which keeps only its
    accumulator)."""

    key: Any
    start_ms: int
    end_ms: int
    value: Any
    count: int | None


@dataclass(frozen=True, slots=True)
class WindowTime:
    """A window operator: event time (fired by its input watermark) or processing time (by the window
    timer), its kind and size (ms; a session's gap), messages dropped as late, panes fired, and the open
    panes (``open_panes`` in all, for a session window the keys with open sessions; ``panes`` the
    earliest ending, at most :data:`PANES_SHOWN`)."""

    event_time: bool
    kind: str
    size_ms: int
    late: int
    fired: int
    open_panes: int
    panes: tuple[PaneTime, ...]


@dataclass(frozen=True, slots=True)
class OperatorTime:
    """One operator of the task: its id and kind, and its input and output watermarks (-1 while unknown);
    ``window`` for a window operator."""

    op_id: str
    kind: str
    input_watermark: int
    output_watermark: int
    window: WindowTime | None = None


@dataclass(frozen=True, slots=True)
class TaskTime:
    """Event time in one operator task: its input partitions and its operators (upstream first)."""

    task: str
    inputs: tuple[InputTime, ...]
    operators: tuple[OperatorTime, ...]


def task_time(task: str, graph: TaskGraph, control: ControlFlow, limit: int = PANES_SHOWN) -> TaskTime:
    """A snapshot of ``task``'s event time (see the module docstring)."""
    inputs = []
    for ssp in sorted(control.ssps):
        state = control.watermarks.state_of(ssp)
        intermediate = ssp.system_stream in control.partitions
        inputs.append(
            InputTime(
                ssp,
                intermediate,
                state["watermark"],
                tuple(state["timestamps"].items()) if intermediate else (),
                state["total"],
            )
        )
    operators = tuple(
        OperatorTime(
            op.op_id,
            op.spec.kind.value,
            op.input_watermark,
            op.output_watermark,
            _window(op, limit) if isinstance(op, WindowImpl) else None,
        )
        for op in graph.operators
    )
    return TaskTime(task, tuple(inputs), operators)


def _smallest(heap: list[Any], k: int) -> list[Any]:
    """The ``k`` smallest entries of a heap (a list in heap order), smallest first, reading about
    ``k log k`` of them (never the whole heap: a window of a million keys costs what one of twenty does)."""
    found: list[Any] = []
    frontier = [(heap[0], 0)] if heap else []
    while frontier and len(found) < k:
        entry, i = heapq.heappop(frontier)
        found.append(entry)
        for child in (2 * i + 1, 2 * i + 2):
            if child < len(heap):
                heapq.heappush(frontier, (heap[child], child))
    return found


def _window(op: WindowImpl, limit: int) -> WindowTime:
    panes: list[PaneTime] = []
    total = 0
    if isinstance(op, TumblingWindowImpl):
        size = op.window.size_ms
        total = sum(len(keys) for keys in op.open.values())
        for end in heapq.nsmallest(limit, op.open):
            for key, acc in itertools.islice(op.open[end].items(), limit - len(panes)):
                panes.append(PaneTime(key, end - size, end, acc, None))
            if len(panes) >= limit:
                break
    elif isinstance(op, SessionWindowImpl):
        gap = op.window.size_ms
        total = len(op.sessions)  # keys with open sessions (a key may have several)
        seen: set[int] = set()
        for _, _, key in _smallest(op.checks, 4 * limit):
            open_ = op.sessions.get(key)
            if not open_ or id(open_) in seen:
                continue  # a stale check, or a key already listed
            seen.add(id(open_))
            panes.extend(
                PaneTime(key, start, last + gap, None, len(messages)) for start, last, messages in open_
            )
            if len(panes) >= limit:
                break
        panes = sorted(panes, key=lambda pane: pane.end_ms)[:limit]
    return WindowTime(
        op.event_time,
        op.window.kind.value,
        op.window.size_ms,
        op.metrics["late"],
        op.metrics["panes"],
        total,
        tuple(panes),
    )


__all__ = ["PANES_SHOWN", "InputTime", "OperatorTime", "PaneTime", "TaskTime", "WindowTime", "task_time"]
