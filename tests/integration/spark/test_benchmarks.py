"""The Spark benchmarks at a tiny size in the session's SparkSession: each runs to its end and its output
checks run (benchmarks/output_check.py). ``spark_runner.py``'s (c) with ``--runner spark`` starts a JVM
of its own (~10 s) and is left to the benchmark's own runs; its plain-runner half runs here."""

from __future__ import annotations

from typing import Any

from tests.integration.benchmark_scripts import benchmark, checks

__all__ = ["checks"]  # the fixture, imported to be used here


def test_spark_bounded(spark: Any, checks: list[str]) -> None:
    benchmark("spark_bounded").measure(spark, 300, 1)
    assert checks == [
        "user: messages processed",
        "user: the last message",
        "id: messages processed",
        "id: the last message",
    ]


def test_spark_runner_scaling(spark: Any, checks: list[str]) -> None:
    benchmark("spark_runner").scaling(400, 0, 1, spark=spark)
    for containers in (1, 2):
        assert f"scale-0-{containers}: messages processed" in checks
        assert f"scale-0-{containers}: the checkpointed offset of each partition" in checks


def test_spark_runner_first_message() -> None:
    assert benchmark("spark_runner").first_message("local") > 0


def test_spark_launch_breakdown_of_the_plain_runner() -> None:
    launch = benchmark("spark_launch")
    marks = launch.launch("local", "log", "local[2]", None)
    assert 0 < marks["cli.imported"] <= marks["task.init"] <= marks["first.message"]
    steps = [line.split()[0] for line in launch.breakdown([marks])]
    assert steps[0] == "interpreter" and steps[-2:] == ["container", "first"], steps


def test_spark_stream_latency(spark: Any, checks: list[str]) -> None:
    benchmark("spark_stream_latency").measure(spark, 20, 3, 1, 2)
    assert checks == ["messages processed once each"]
