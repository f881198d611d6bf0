"""The live throughput and lag chart: real bqplot objects (no front-end), fed JobViews."""

from __future__ import annotations

import importlib.util
import math
import re

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.notebook.display.views import JobView, PartitionView, TaskView
from tests.requirements import unavailable

if importlib.util.find_spec("bqplot") is None:  # not imported here: the chart's module imports it quietly
    unavailable("bqplot is not installed: the chart needs it (samza_nb[notebook])")

from samza_nb.notebook.display.charts import ThroughputLagChart, chart_svg, total_lag

TD = "<td style='padding:0 8px;white-space:nowrap'>"
TH = "<th style='text-align:left;padding:0 8px;white-space:nowrap'>"


def view(elapsed: float, rate: float, lags: tuple[int | None, ...] = (3, 4)) -> JobView:
    partitions = tuple(
        PartitionView(SystemStreamPartition("mem", "in", p), "1", None, "9", lag, False)
        for p, lag in enumerate(lags)
    )
    task = TaskView("Partition 0", 0, 1, 10, "processing", partitions)
    return JobView("j", "on its own thread", "running", elapsed_s=elapsed, rate=rate, tasks=(task,))


def test_each_update_adds_one_point_to_both_lines() -> None:
    chart = ThroughputLagChart()
    chart.update(view(0.2, 100.0, (3, 4)))
    chart.update(view(0.4, 250.0, (1, None)))
    assert chart.points == 2
    assert list(chart.rate_line.x) == [0.2, 0.4]
    assert list(chart.rate_line.y) == [100.0, 250.0]
    assert list(chart.lag_line.x) == [0.2, 0.4]
    assert list(chart.lag_line.y) == [7.0, 1.0]  # the sum of the lags that are known
    assert chart.widget.marks == [chart.rate_line, chart.lag_line]
    # The legend is HTML above the figure, not drawn over the data.
    assert chart.widgets == (chart.legend, chart.widget)
    assert not chart.rate_line.display_legend and not chart.lag_line.display_legend
    assert "msg/s" in chart.legend.value and "total lag" in chart.legend.value
    sides = [axis.side for axis in chart.widget.axes]
    assert sides == ["bottom", "left", "right"]  # lag on an axis of its own


def test_the_lag_line_starts_at_the_first_known_lag_and_the_same_view_twice_adds_nothing() -> None:
    """bqplot draws no line at all (``d="null"``) through a NaN, and the first views come before the
    first head offsets: the lag line holds only the points whose lag is known."""
    chart = ThroughputLagChart()
    first = view(0.2, 10.0, (None, None))
    assert total_lag(first) is None
    chart.update(first)
    chart.update(first)
    assert chart.points == 1
    assert len(chart.lag_line.x) == len(chart.lag_line.y) == 0
    assert chart.series() == ((0.2,), (10.0,), (None,))
    chart.update(view(0.4, 20.0, (48_000, 515)))
    chart.update(view(0.6, 30.0, (47_000, 500)))
    assert list(chart.rate_line.x) == [0.2, 0.4, 0.6]
    assert list(chart.lag_line.x) == [0.4, 0.6] and list(chart.lag_line.y) == [48_515.0, 47_500.0]
    assert not any(math.isnan(y) for y in chart.lag_line.y)


def test_the_history_is_bounded_to_the_window() -> None:
    chart = ThroughputLagChart(window=5)
    for i in range(1, 13):
        chart.update(view(i * 0.2, float(i), (i,)))
    assert chart.points == 5
    assert list(chart.rate_line.y) == [8.0, 9.0, 10.0, 11.0, 12.0]
    assert len(chart.lag_line.x) == 5 and chart.lag_line.x[0] == 8 * 0.2
    chart.update(view(0.2, 1.0))  # a new run: its clock starts again
    assert chart.points == 1


def test_summary_gives_min_max_and_last() -> None:
    chart = ThroughputLagChart()
    assert chart.summary_html() == ""
    for elapsed, rate, lag in ((0.2, 50.0, 1200), (0.4, 2000.0, 30), (0.6, 1500.0, 400)):
        chart.update(view(elapsed, rate, (lag,)))
    summary = chart.summary_html()
    assert "class='samza-chart-summary'" in summary
    assert "over 0.4 s (3 points)" in summary
    assert (f"{TD}msg/s</td>{TD}50</td>{TD}2,000</td>{TD}1,500</td>") in summary
    assert (f"{TD}total lag</td>{TD}30</td>{TD}1,200</td>{TD}400</td>") in summary


def test_summary_pictures_the_chart_and_gives_the_average_rate() -> None:
    """The snapshot keeps the chart as a picture (inline SVG: one polyline per series, the lag's from its
    first known point) and the run's true average rate (processed / elapsed), even for a short job."""
    chart = ThroughputLagChart()
    chart.update(view(0.2, 4_000.0, (None,)))
    chart.update(view(0.4, 6_000.0, (800,)))
    chart.update(view(0.6, 5_000.0, (0,)))
    summary = chart.summary_html(average=16_666.4)
    assert "<span class='samza-average-rate'>average 16,666 msg/s</span>" in summary
    assert summary.count("<svg class='samza-chart-picture'") == 1
    picture = summary[summary.index("<svg") : summary.index("</svg>")]
    assert picture.count("<polyline") == 2
    rate_points, lag_points = re.findall(r"points='([^']*)'", picture)
    assert len(rate_points.split()) == 3 and len(lag_points.split()) == 2
    assert "6,000 msg/s" in picture and "800 lag" in picture


def test_a_picture_needs_two_points() -> None:
    assert chart_svg((0.2,), (10.0,), (None,)) == ""
    picture = chart_svg((0.2, 0.4), (0.0, 0.0), (None, None))  # nothing yet: a flat line, no lag line
    assert picture.count("<polyline") == 1 and "nan" not in picture.lower()
