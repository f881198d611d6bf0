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

import math
import threading
import warnings
from collections import deque
from typing import TYPE_CHECKING

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
    from samza_nb.notebook.display.views import JobView

WINDOW = 300
"""Points kept by default: a minute at the monitor's five views a second."""

RATE_COLOUR = "#27a"
LAG_COLOUR = "#d62"


def total_lag(view: JobView) -> int | None:
    """The sum of the input partitions' lag where it is known; None when no partition's lag is known."""
    lags = [p.lag for p in view.partitions if p.lag is not None]
    return sum(lags) if lags else None


class ThroughputLagChart:
    """Throughput (msg/s) and total lag (messages) over seconds since the job started, the last
    ``window`` points of them. ``widget`` is the bqplot Figure to place in the dashboard.

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
        x = LinearScale()
        rate_scale, lag_scale = LinearScale(min=0.0), LinearScale(min=0.0)
        self.rate_line = Lines(
            x=np.zeros(0), y=np.zeros(0), scales={"x": x, "y": rate_scale}, colors=[RATE_COLOUR],
            labels=["msg/s"], display_legend=True,
        )  # fmt: skip
        self.lag_line = Lines(
            x=np.zeros(0), y=np.zeros(0), scales={"x": x, "y": lag_scale}, colors=[LAG_COLOUR],
            labels=["total lag"], display_legend=True,
        )  # fmt: skip
        axes = [
            Axis(scale=x, label="seconds since start", grid_lines="none"),
            Axis(scale=rate_scale, side="left", label="msg/s", color=RATE_COLOUR, grid_lines="dashed"),
            Axis(scale=lag_scale, side="right", label="lag (messages)", color=LAG_COLOUR, grid_lines="none"),
        ]
        self.widget = Figure(
            marks=[self.rate_line, self.lag_line],
            axes=axes,
            title="throughput and lag",
            legend_location="top-left",
            animation_duration=0,
            fig_margin={"top": 40, "bottom": 40, "left": 60, "right": 60},
        )
        self.widget.layout.height = height
        self.widget.layout.width = "100%"
        self.widget.add_class("samza-chart")

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
        with self.rate_line.hold_sync(), self.lag_line.hold_sync():
            self.rate_line.x, self.rate_line.y = x, rates
            self.lag_line.x, self.lag_line.y = x, lags

    def summary_html(self) -> str:
        """The series' minimum, maximum and last values as a small table (``samza-chart-summary``), over
        the points held; empty before the first point."""
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
        table = html_table(("series", "min", "max", "last"), rows, css_class="samza-chart-summary")
        return f"<div style='margin-top:4px'><b>throughput and lag</b> {span}{table}</div>"


__all__ = ["WINDOW", "ThroughputLagChart", "total_lag"]
