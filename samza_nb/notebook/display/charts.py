"""A live chart of a job's throughput and lag over time (bqplot), fed one JobView at a time.

:class:`ThroughputLagChart` owns a bqplot ``Figure`` with two lines over seconds since the start:
messages per second (left axis) and the total lag of the input partitions (right axis). The dashboard's
updater thread calls :meth:`ThroughputLagChart.update` with each new view, a few times a second: one
point is appended to a bounded window and each line's arrays are set once, in one ``hold_sync``, so an
update is one small message to the front-end. Nothing here runs on the job's loop.

:meth:`ThroughputLagChart.summary_html` gives the series' minimum, maximum and last values as a small
table, for the static snapshot a finished job leaves behind (a saved notebook shows no widgets).
"""

from __future__ import annotations

import html
import importlib
import math
import threading
import warnings
from collections import deque
from typing import TYPE_CHECKING, Any

import numpy as np

with warnings.catch_warnings():
    # bqscales' DateScale passes trait metadata the way traitlets 4.0 did; harmless, and raised as an
    # error under pytest's filterwarnings = error when bqplot is first imported.
    warnings.filterwarnings(
        "ignore", message=r"metadata \{.*\} was set from the constructor", category=DeprecationWarning
    )
    from bqplot import Axis, Figure, LinearScale, Lines  # type: ignore[import-untyped,unused-ignore]

from samza_nb.notebook.display.text_status import html_table

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.notebook.display.views import JobView

WINDOW = 300
"""Points kept by default: a minute at the monitor's five views a second."""

RATE_COLOUR = "#27a"
LAG_COLOUR = "#d62"


def total_lag(view: JobView) -> int | None:
    """The sum of the input partitions' lag where it is known; None when no partition's lag is known."""
    lags = [p.lag for p in view.partitions if p.lag is not None]
    return sum(lags) if lags else None


def legend_html() -> str:
    """The chart's title and legend (``samza-chart-legend``): which line is which, and on which axis."""
    key = "display:inline-block;width:18px;height:3px;vertical-align:middle;margin:0 4px 0 12px;background:"
    return (
        "<div class='samza-chart-legend'><b>throughput and lag</b>"
        f"<span style='{key}{RATE_COLOUR}'></span>msg/s (left axis)"
        f"<span style='{key}{LAG_COLOUR}'></span>total lag, messages (right axis)</div>"
    )


class ThroughputLagChart:
    """Throughput (msg/s) and total lag (messages) over seconds since the job started, the last
    ``window`` points of them. ``widget`` is the bqplot Figure, ``legend`` its title and legend (an HTML
    widget); ``widgets`` both, to place in the dashboard.

    Call :meth:`update` from one thread (the dashboard's updater); the view of the last point again adds
    nothing, an older one (a new run) starts the chart afresh.
    """

    def __init__(self, window: int = WINDOW, *, height: str = "220px") -> None:
        if window < 2:
            raise ValueError(f"a chart needs a window of at least 2 points, not {window}")
        self.window = window
        self._times: deque[float] = deque(maxlen=window)
        self._rates: deque[float] = deque(maxlen=window)
        self._lags: deque[float] = deque(maxlen=window)  # NaN where no lag was known
        self._lock = threading.Lock()  # summary_html may read from another thread than update's
        w = importlib.import_module("ipywidgets")  # untyped, like bqplot
        self.legend = w.HTML(value=legend_html())
        x = LinearScale()
        rate_scale, lag_scale = LinearScale(min=0.0), LinearScale(min=0.0)
        self.rate_line = Lines(
            x=np.zeros(0), y=np.zeros(0), scales={"x": x, "y": rate_scale}, colors=[RATE_COLOUR],
            labels=["msg/s"],
        )  # fmt: skip
        self.lag_line = Lines(
            x=np.zeros(0), y=np.zeros(0), scales={"x": x, "y": lag_scale}, colors=[LAG_COLOUR],
            labels=["total lag"],
        )  # fmt: skip
        axes = [
            Axis(scale=x, label="seconds since start", grid_lines="none"),
            Axis(
                scale=rate_scale,
                side="left",
                label="msg/s",
                color=RATE_COLOUR,
                grid_lines="dashed",
                label_offset="55px",
            ),
            Axis(
                scale=lag_scale,
                side="right",
                label="lag (messages)",
                color=LAG_COLOUR,
                grid_lines="none",
                label_offset="65px",
            ),
        ]
        self.widget = Figure(
            marks=[self.rate_line, self.lag_line],
            axes=axes,
            animation_duration=0,
            fig_margin={"top": 10, "bottom": 40, "left": 70, "right": 80},
        )
        self.widget.layout.height = height
        self.widget.layout.width = "100%"
        self.widget.add_class("samza-chart")

    @property
    def widgets(self) -> tuple[Any, ...]:
        """The legend and the figure, in the order they show."""
        return (self.legend, self.widget)

    @property
    def points(self) -> int:
        """How many points the chart holds (at most ``window``)."""
        return len(self._times)

    def series(self) -> tuple[tuple[float, ...], tuple[float, ...], tuple[float | None, ...]]:
        """The points held: (seconds since start, msg/s, total lag or None), oldest first."""
        with self._lock:
            lags = tuple(None if math.isnan(v) else v for v in self._lags)
            return tuple(self._times), tuple(self._rates), lags

    def update(self, view: JobView) -> None:
        """Append ``view``'s throughput and total lag at its elapsed time, dropping the oldest point past
        the window, and send both lines' arrays to the front-end in one go."""
        lag = total_lag(view)
        with self._lock:
            times = self._times
            if times and view.elapsed_s <= times[-1]:
                if view.elapsed_s == times[-1]:
                    return  # the same view again: nothing new
                times.clear()  # a new run of the job: its clock started again
                self._rates.clear()
                self._lags.clear()
            times.append(view.elapsed_s)
            self._rates.append(view.rate)
            self._lags.append(math.nan if lag is None else float(lag))
            x = np.fromiter(times, dtype=float, count=len(times))
            rates = np.fromiter(self._rates, dtype=float, count=len(times))
            lags = np.fromiter(self._lags, dtype=float, count=len(times))
        known = ~np.isnan(lags)  # bqplot draws no line at all through a NaN: only the known points
        with self.rate_line.hold_sync(), self.lag_line.hold_sync():
            self.rate_line.x, self.rate_line.y = x, rates
            self.lag_line.x, self.lag_line.y = x[known], lags[known]

    def summary_html(self, average: float | None = None) -> str:
        """The chart as a picture (:func:`chart_svg`) over a small table (``samza-chart-summary``) of the
        series' minimum, maximum and last values, over the points held, with ``average`` (the run's
        messages per second, processed / elapsed: true even for a job shorter than one point) when
        given; empty before the first point."""
        times, rates, lags = self.series()
        if not times:
            return ""
        known = [lag for lag in lags if lag is not None]
        rows = [("msg/s", *(f"{v:,.0f}" for v in (min(rates), max(rates), rates[-1])))]
        if known:
            last = "—" if lags[-1] is None else f"{lags[-1]:,.0f}"
            rows.append(("total lag", f"{min(known):,.0f}", f"{max(known):,.0f}", last))
        else:
            rows.append(("total lag", "—", "—", "—"))
        span = f"over {times[-1] - times[0]:.1f} s ({len(times)} point{'s' if len(times) != 1 else ''})"
        if average is not None:
            span += f" · <span class='samza-average-rate'>average {average:,.0f} msg/s</span>"
        table = html_table(("series", "min", "max", "last"), rows, css_class="samza-chart-summary")
        picture = chart_svg(times, rates, lags)
        return f"<div style='margin-top:4px'><b>throughput and lag</b> {span}{picture}{table}</div>"


def _polyline(xs: Sequence[float], ys: Sequence[float], top: float, colour: str) -> str:
    points = " ".join(
        f"{_X0 + x * _W:.1f},{_Y0 + _H - (y / top if top > 0 else 0.0) * _H:.1f}"
        for x, y in zip(xs, ys, strict=True)
    )
    return f"<polyline fill='none' stroke='{colour}' stroke-width='2' points='{points}'/>"


_X0, _Y0, _W, _H = 100.0, 8.0, 420.0, 120.0  # the plot area inside the picture (px)


def chart_svg(times: Sequence[float], rates: Sequence[float], lags: Sequence[float | None]) -> str:
    """The throughput and lag lines as a static picture (inline SVG, ``samza-chart-picture``): msg/s on the
    left axis, total lag on the right one (its line from the first known point), seconds since the start
    below. Empty with fewer than two points (a job shorter than one sample: the average says it all)."""
    if len(times) < 2:
        return ""
    t0, span = times[0], (times[-1] - times[0]) or 1.0
    xs = [(t - t0) / span for t in times]
    top_rate = max(rates)
    lines = [_polyline(xs, rates, top_rate, RATE_COLOUR)]
    known = [(x, lag) for x, lag in zip(xs, lags, strict=True) if lag is not None]
    top_lag = max((lag for _, lag in known), default=0.0)
    if len(known) >= 2:
        lines.append(_polyline([x for x, _ in known], [lag for _, lag in known], top_lag, LAG_COLOUR))
    bottom, right = _Y0 + _H, _X0 + _W
    labels = [
        (_X0 - 6, _Y0 + 10, "end", RATE_COLOUR, f"{top_rate:,.0f} msg/s"),
        (_X0 - 6, bottom, "end", RATE_COLOUR, "0"),
        (_X0, bottom + 16, "start", "currentColor", f"{times[0]:.1f} s"),
        (right, bottom + 16, "end", "currentColor", f"{times[-1]:.1f} s since start"),
    ]
    if known:
        labels.append((right + 6, _Y0 + 10, "start", LAG_COLOUR, f"{top_lag:,.0f} lag"))
        labels.append((right + 6, bottom, "start", LAG_COLOUR, "0"))
    text = "".join(
        f"<text x='{x:.0f}' y='{y:.0f}' text-anchor='{anchor}' fill='{colour}'>{html.escape(label)}</text>"
        for x, y, anchor, colour, label in labels
    )
    frame = (
        f"<rect x='{_X0}' y='{_Y0}' width='{_W}' height='{_H}' fill='none' stroke='currentColor' "
        "stroke-opacity='0.3'/>"
    )
    return (
        f"<svg class='samza-chart-picture' xmlns='http://www.w3.org/2000/svg' width='{right + 100:.0f}' "
        f"height='{bottom + 24:.0f}' style='display:block;font-size:11px;margin:4px 0'>"
        f"{frame}{''.join(lines)}{text}</svg>"
    )


__all__ = ["WINDOW", "ThroughputLagChart", "chart_svg", "legend_html", "total_lag"]
