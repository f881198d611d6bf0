"""The live throughput and lag chart: real bqplot objects (no front-end), fed JobViews."""

from __future__ import annotations

import importlib.util
import math

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.notebook.display.views import JobView, PartitionView, TaskView
from tests.requirements import unavailable

if importlib.util.find_spec("bqplot") is None:  # not imported here: the chart's module imports it quietly
    unavailable("bqplot is not installed: the chart needs it (samza_nb[notebook])")

from samza_nb.notebook.display.charts import ThroughputLagChart, total_lag

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
    sides = [axis.side for axis in chart.widget.axes]
    assert sides == ["bottom", "left", "right"]  # lag on an axis of its own


def test_unknown_lag_is_a_gap_and_the_same_view_twice_adds_nothing() -> None:
    chart = ThroughputLagChart()
    first = view(0.2, 10.0, (None, None))
    assert total_lag(first) is None
    chart.update(first)
    chart.update(first)
    assert chart.points == 1
    assert math.isnan(chart.lag_line.y[0])
    assert chart.series() == ((0.2,), (10.0,), (None,))


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
