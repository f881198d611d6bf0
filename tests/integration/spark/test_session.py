"""The session's SparkSession works (the other Spark tests rely on it)."""

from __future__ import annotations

from typing import Any


def test_session_runs_a_job(spark: Any) -> None:
    assert spark.range(5).count() == 5
    assert spark.sparkContext.defaultParallelism == 2
