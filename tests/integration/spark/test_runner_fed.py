"""A streaming DataFrame under the Spark runner: the driver feeds it into the durable log while the
containers, as Spark tasks, read it; the feed's micro-batches need a task slot of their own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.spark import register_dataframe, unregister_dataframe
from tests.eventually import eventually
from tests.integration.spark.fed_job import (
    PARTITIONS,
    job_config,
    rate_stream,
    read_echo,
    running_in_background,
)


@pytest.fixture(autouse=True)
def _unregister() -> Iterator[None]:
    yield
    unregister_dataframe("rates")


def config(base: Path, containers: int) -> Config:
    return Config(
        {
            **job_config(base),
            "task.class": "tests.integration.spark.fed_job.EchoTask",
            "job.container.count": str(containers),
        }
    )


def test_a_fed_stream_needs_a_slot_besides_the_containers(spark: Any, tmp_path: Path) -> None:
    register_dataframe("rates", rate_stream(spark), key="key", timestamp="ts", partitions=PARTITIONS)
    runner = SparkJobRunner(config(tmp_path, 2), spark)
    with pytest.raises(ConfigError, match=r"job\.container\.count = 2.*feeding spark\.rates.*<= 1") as info:
        runner.start()
    assert info.value.key == "job.container.count"


def test_the_spark_runner_reads_a_stream_the_driver_feeds(spark: Any, tmp_path: Path) -> None:
    register_dataframe("rates", rate_stream(spark), key="key", timestamp="ts", partitions=PARTITIONS)
    runner = SparkJobRunner(config(tmp_path, 1), spark)
    with running_in_background(runner, timeout=180) as errors:
        eventually(lambda: sum(map(len, read_echo(tmp_path).values())) >= 60, timeout=150)
    assert not errors, errors
    assert runner.stopped and runner.failure is None
    echo = read_echo(tmp_path)
    for rows in echo.values():  # in order per partition, none lost
        values = [value for value, _, _ in rows]
        assert values == sorted(set(values))
    assert not [q for q in spark.streams.active if q.name and "rates" in q.name]  # the feed stopped


def test_a_feed_failing_on_the_driver_fails_the_spark_job_naming_the_stream(
    spark: Any, tmp_path: Path
) -> None:
    from pyspark.sql import functions as F

    bad = rate_stream(spark).withColumn("ts", F.lit("not a time"))  # a string timestamp column
    register_dataframe("rates", bad, key="key", timestamp="ts", partitions=PARTITIONS)
    runner = SparkJobRunner(config(tmp_path, 1), spark)
    with pytest.raises(SamzaError, match=r"the feed of stream spark\.rates failed: .*'ts'"):
        runner.run(timeout=150)
    assert not [q for q in spark.streams.active if q.name and "rates" in q.name]
