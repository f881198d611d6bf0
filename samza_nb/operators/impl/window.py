"""Window operators: tumbling and session windows over event time (fired by the input watermark) or
processing time (fired by the task's window timer). Every window fires at end-of-stream too.

State lives in the store named after the op id (the durable truth, committed with the task's offsets);
an index in memory, rebuilt from the store at init, makes the per-message path and firing cheap, so a
restart in the middle of a window continues its panes.

- Tumbling: store key ``(start_ms, key)`` → ``(accumulator,)``; a pane is ``[n * size, (n + 1) * size)``.
- Session: store key ``(key,)`` → the key's open sessions ``[start_ms, last_ms, [messages]]``. A session
  keeps its messages until it fires, because a message that bridges two sessions merges them and the
  merged pane folds all their messages (a session's in arrival order; a merged one's: the earlier
  session's, then the later one's, then the bridging message); ``end_ms = last + gap``.

A message whose pane already fired (tumbling: its window end <= the input watermark; session: its own
session would end at or before it, ``ts + gap <= watermark``) is late: it is dropped and counted in the
op's ``late`` metric. ``panes`` counts the panes fired. Panes fire in (end, key) order (keys that do not
compare fire in the order they were first seen). A pane's timestamp is ``end_ms - 1``.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable
from typing import Any, Final

from samza_nb import crash_points
from samza_nb.control.messages import WATERMARK_NOT_EXIST
from samza_nb.errors import SamzaError
from samza_nb.operators.graph import WindowSpec
from samza_nb.operators.impl.base import WATERMARK_MAX, Emit, MissingTimestamp, OperatorImpl, OpRuntime
from samza_nb.operators.impl.compile import Inline
from samza_nb.operators.values import WindowPane
from samza_nb.operators.windows import TimeCharacteristic, Window, WindowKind

_MISSING: Final[Any] = object()

Stamp = Callable[[Any, "int | None"], int]


def fire_order(panes: list[WindowPane]) -> list[WindowPane]:
    """``panes`` by (end, key); by end only (first seen first) when keys do not compare."""
    try:
        return sorted(panes, key=lambda p: (p.end_ms, p.key))
    except TypeError:
        return sorted(panes, key=lambda p: p.end_ms)


class WindowImpl(OperatorImpl):
    """A window operator (see the module docstring)."""

    def __init__(self, spec: WindowSpec, runtime: OpRuntime) -> None:
        super().__init__(spec, runtime)
        if spec.window is None:
            raise SamzaError(f"window {spec.op_id!r} has no window definition")
        self.window: Window = spec.window
        self.event_time = self.window.time is TimeCharacteristic.EVENT
        self.fire_mark: int = WATERMARK_NOT_EXIST
        """Panes ending at or before this have fired: the input watermark (event time) or the time of
        the last timer (processing time)."""
        self.metrics = runtime.op_metrics(self.op_id, late=0, panes=0)
        self.store: Any = None

    # -- time ------------------------------------------------------------------------------------------
    @property
    def uses_envelope_time(self) -> bool:
        """True when a message's time is the timestamp it came with (event time, no ``timestamp_fn``):
        the entries then call :meth:`stamp` only for a message without one (which raises)."""
        return self.event_time and self.window.timestamp_fn is None

    def stamp(self) -> Stamp:
        """The event time (or processing time) of a message: the window's ``timestamp_fn``, else the
        message's timestamp (event time), else the container clock (processing time)."""
        if not self.event_time:
            now = self.runtime.now
            return lambda message, timestamp: now()
        timestamp_fn = self.window.timestamp_fn
        op_id = self.op_id
        if timestamp_fn is not None:

            def from_message(message: Any, timestamp: int | None) -> int:
                value = timestamp_fn(message)
                if type(value) is not int:
                    raise SamzaError(
                        f"window {op_id!r}: timestamp_fn returned {value!r} ({type(value).__name__}) for "
                        f"{message!r}: it must return the event time as an int (ms)"
                    )
                return value

            return from_message

        def event_time(message: Any, timestamp: int | None) -> int:
            if timestamp is None:
                raise MissingTimestamp(op_id, "window")
            return timestamp

        return event_time

    @property
    def has_timer(self) -> bool:
        return not self.event_time

    def handle_watermark(self, watermark: int) -> None:
        if self.event_time:
            self.fire(watermark)

    def on_timer(self, now_ms: int) -> None:
        if not self.event_time:
            self.fire(now_ms)

    def handle_end_of_stream(self) -> None:
        self.fire(WATERMARK_MAX)

    def fire(self, mark: int) -> None:
        """Emit every pane that ends at or before ``mark``, in (end, key) order, and forget it."""
        if mark > self.fire_mark:
            self.fire_mark = mark
        panes = self.due(mark)
        if not panes:
            return
        self.metrics["panes"] += len(panes)
        emit = self.emit
        ordered = fire_order(panes)
        for pane in ordered:
            emit(pane, pane.end_ms - 1)
            if crash_points.ARMED and pane is not ordered[-1]:
                crash_points.reached("window.mid-fire")
        if crash_points.ARMED:
            crash_points.reached("window.fired")

    def due(self, mark: int) -> list[WindowPane]:
        """Remove and return the panes ending at or before ``mark`` (any order)."""
        raise NotImplementedError

    def init(self) -> None:
        self.store = self.runtime.context.get_store(self.op_id)
        for entry in self.store.all():
            try:
                self.restore(*entry)
            except (TypeError, ValueError):
                raise SamzaError(
                    f"store {self.op_id!r} holds {entry!r}, which is not the state of a "
                    f"{self.window.kind.value} window: was the op id used for another operator?"
                ) from None

    def restore(self, key: Any, value: Any) -> None:
        """Take one stored entry back into the in-memory index."""
        raise NotImplementedError


class TumblingWindowImpl(WindowImpl):
    """Fixed windows ``[n * size, (n + 1) * size)`` per key."""

    def __init__(self, spec: WindowSpec, runtime: OpRuntime) -> None:
        super().__init__(spec, runtime)
        self.open: dict[int, dict[Any, Any]] = {}  # window end -> key -> accumulator
        self.ends: list[int] = []  # heap of the keys of ``open``

    def entry(self, index: int) -> Emit:
        window, metrics, stamp, open_ = self.window, self.metrics, self.stamp(), self.open
        size, init, fold, key_fn = window.size_ms, window.init, window.fold, window.key_fn
        put, new_panes, plain = self.store.put, self._new_panes, self.uses_envelope_time

        def on_tumbling(message: Any, timestamp: int | None) -> None:
            if timestamp is None or not plain:
                timestamp = stamp(message, timestamp)
            start = timestamp - timestamp % size
            end = start + size
            if end <= self.fire_mark:
                metrics["late"] += 1
                return
            key = None if key_fn is None else key_fn(message)
            panes = open_.get(end)
            if panes is None:
                panes = new_panes(end)
            acc = panes.get(key, _MISSING)
            acc = panes[key] = fold(message, init() if acc is _MISSING else acc)
            put((start, key), (acc,))

        return on_tumbling

    def inline_entry(self, index: int, var: str, prefix: str) -> Inline:
        """The lines of :meth:`entry`'s ``on_tumbling``, for a window reached from one place."""
        p, window = prefix, self.window
        names: dict[str, Any] = {
            f"{p}_window": self,
            f"{p}_open": self.open,
            f"{p}_new": self._new_panes,
            f"{p}_fold": window.fold,
            f"{p}_init": window.init,
            f"{p}_put": self.store.put,
            f"{p}_size": window.size_ms,
            f"{p}_metrics": self.metrics,
            f"{p}_stamp": self.stamp(),
            "MISSING": _MISSING,
        }
        if self.uses_envelope_time:
            lines = ["if ts is None:", f"    {p}_stamp({var}, ts)"]  # raises MissingTimestamp
            time = "ts"
        else:
            lines, time = [f"{p}_time = {p}_stamp({var}, ts)"], f"{p}_time"
        if window.key_fn is None:
            key = f"    {p}_key = None"
        else:
            names[f"{p}_key_fn"] = window.key_fn
            key = f"    {p}_key = {p}_key_fn({var})"
        lines += [
            f"{p}_start = {time} - {time} % {p}_size",
            f"{p}_end = {p}_start + {p}_size",
            f"if {p}_end <= {p}_window.fire_mark:",
            f"    {p}_metrics['late'] += 1",
            "else:",
            key,
            f"    {p}_panes = {p}_open.get({p}_end)",
            f"    if {p}_panes is None:",
            f"        {p}_panes = {p}_new({p}_end)",
            f"    {p}_acc = {p}_panes.get({p}_key, MISSING)",
            f"    if {p}_acc is MISSING:",
            f"        {p}_acc = {p}_init()",
            f"    {p}_acc = {p}_panes[{p}_key] = {p}_fold({var}, {p}_acc)",
            f"    {p}_put(({p}_start, {p}_key), ({p}_acc,))",
        ]
        return Inline(tuple(lines), names)

    def _new_panes(self, end: int) -> dict[Any, Any]:
        """The (new, empty) accumulators of the panes ending at ``end``."""
        panes: dict[Any, Any] = {}
        self.open[end] = panes
        heapq.heappush(self.ends, end)
        return panes

    def due(self, mark: int) -> list[WindowPane]:
        ends, size, delete = self.ends, self.window.size_ms, self.store.delete
        fired: list[WindowPane] = []
        while ends and ends[0] <= mark:
            end = heapq.heappop(ends)
            start = end - size
            for key, acc in self.open.pop(end).items():
                fired.append(WindowPane(key, start, end, acc))
                delete((start, key))
        return fired

    def restore(self, key: Any, value: Any) -> None:
        start, pane_key = key
        (acc,) = value
        end = start + self.window.size_ms
        panes = self.open.get(end)
        if panes is None:
            panes = self._new_panes(end)
        panes[pane_key] = acc


def _touches(sessions: list[list[Any]] | None, timestamp: int, gap: int) -> bool:
    """True when a message at ``timestamp`` is closer than ``gap`` to one of ``sessions`` (not fired)."""
    return bool(sessions) and any(s[0] < timestamp + gap and s[1] > timestamp - gap for s in sessions or ())


class SessionWindowImpl(WindowImpl):
    """Per-key sessions: messages closer than the gap belong to one session; a message may bridge two."""

    def __init__(self, spec: WindowSpec, runtime: OpRuntime) -> None:
        super().__init__(spec, runtime)
        if self.window.kind is not WindowKind.SESSION:
            raise SamzaError(f"window {self.op_id!r}: {self.window.kind.value} is not a session window")
        self.sessions: dict[Any, list[list[Any]]] = {}  # key -> [[start, last, [messages]]] by start
        # (end, n, key): look at ``key`` once the mark reaches ``end`` (entries may be stale: a session's
        # end only grows, so an entry is never late; a key keeps one at or before its earliest end).
        self.checks: list[tuple[int, int, Any]] = []
        self._seq = itertools.count()

    def entry(self, index: int) -> Emit:
        window, metrics, stamp, sessions = self.window, self.metrics, self.stamp(), self.sessions
        gap, key_fn, put = window.size_ms, window.key_fn, self.store.put
        checks, seq, push, join = self.checks, self._seq, heapq.heappush, self._join
        plain = self.uses_envelope_time

        def on_session(message: Any, timestamp: int | None) -> None:
            if timestamp is None or not plain:
                timestamp = stamp(message, timestamp)
            key = None if key_fn is None else key_fn(message)
            open_ = sessions.get(key)
            if timestamp + gap <= self.fire_mark and not _touches(open_, timestamp, gap):
                # Its own session would have fired already, and no open session takes it in.
                metrics["late"] += 1
                return
            if open_ is None:
                open_ = sessions[key] = [[timestamp, timestamp, [message]]]
                push(checks, (timestamp + gap, next(seq), key))
            else:
                last = open_[-1]
                if last[1] <= timestamp < last[1] + gap:  # in order, extending the latest session
                    last[1] = timestamp
                    last[2].append(message)
                else:
                    join(open_, key, message, timestamp)
            put((key,), open_)

        return on_session

    def _join(self, open_: list[list[Any]], key: Any, message: Any, timestamp: int) -> None:
        """Add ``message`` to the sessions of ``key`` it is closer than the gap to (merging them), or
        start a session."""
        gap = self.window.size_ms
        hits = [s for s in open_ if s[0] < timestamp + gap and s[1] > timestamp - gap]
        if not hits:
            open_.append([timestamp, timestamp, [message]])
            open_.sort(key=lambda s: s[0])
            heapq.heappush(self.checks, (timestamp + gap, next(self._seq), key))
            return
        merged, others = hits[0], hits[1:]
        for other in others:
            merged[1] = max(merged[1], other[1])
            merged[2].extend(other[2])
        if others:
            gone = {id(other) for other in others}
            open_[:] = [s for s in open_ if id(s) not in gone]
        merged[0] = min(merged[0], timestamp)
        merged[1] = max(merged[1], timestamp)
        merged[2].append(message)

    def due(self, mark: int) -> list[WindowPane]:
        checks, sessions, gap = self.checks, self.sessions, self.window.size_ms
        init, fold = self.window.init, self.window.fold
        fired: list[WindowPane] = []
        while checks and checks[0][0] <= mark:
            _, _, key = heapq.heappop(checks)
            open_ = sessions.get(key)
            if not open_:
                continue
            keep = [s for s in open_ if s[1] + gap > mark]
            if len(keep) < len(open_):
                for start, last, messages in open_:
                    if last + gap <= mark:
                        acc = init()
                        for message in messages:
                            acc = fold(message, acc)
                        fired.append(WindowPane(key, start, last + gap, acc))
                if not keep:
                    del sessions[key]
                    self.store.delete((key,))
                    continue
                open_[:] = keep
                self.store.put((key,), open_)
            heapq.heappush(checks, (min(s[1] for s in keep) + gap, next(self._seq), key))
        return fired

    def restore(self, key: Any, value: Any) -> None:
        (session_key,) = key
        open_: list[list[Any]] = [[int(start), int(last), list(messages)] for start, last, messages in value]
        if not open_:
            return
        open_.sort(key=lambda s: s[0])
        self.sessions[session_key] = open_
        gap = self.window.size_ms
        earliest: int = min(s[1] for s in open_) + gap
        heapq.heappush(self.checks, (earliest, next(self._seq), session_key))


def window_impl(spec: WindowSpec, runtime: OpRuntime) -> WindowImpl:
    """The implementation of ``spec``'s window kind."""
    if spec.window is not None and spec.window.kind is WindowKind.SESSION:
        return SessionWindowImpl(spec, runtime)
    return TumblingWindowImpl(spec, runtime)


__all__ = ["SessionWindowImpl", "TumblingWindowImpl", "WindowImpl", "fire_order", "window_impl"]
