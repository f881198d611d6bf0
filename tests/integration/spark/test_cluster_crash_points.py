"""A container killed at the Spark sink's crash points on the standalone cluster (its executor's workers see
only the shared directory): Spark retries it, it recovers its task's commit, and both a plain
``spark.read.parquet(<stream dir>)`` (no option: the ``_spark_metadata`` log) and ``read_output`` hold every
row exactly once. The crash is armed through the executors' environment (``spark.executorEnv``) and fires
once (``SAMZA_NB_CRASH_ONCE``: the retry lives on). Every crash point of the commit sequence is also covered,
faster, by tests/faults/test_spark_output_points.py."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, crash_points
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.spark import read_output
from samza_nb.systems.spark.outputs.generations import current_output_directory
from tests.integration.spark.cluster import SparkCluster
from tests.integration.spark.test_cluster import finish, start_driver
from tests.integration.spark.test_cluster_shared import ROWS, spark_input_job

pytestmark = [pytest.mark.spark_cluster, pytest.mark.timeout(400)]


@pytest.mark.parametrize(
    "point", ["commit.outputs-prepared", "spark.output-logged", "commit.checkpoint-written"]
)
def test_a_container_killed_at_a_sink_crash_point_leaves_plain_spark_and_read_output_exactly_once(
    spark: Any, spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path, point: str
) -> None:
    marker = spark_cluster.shared / f"crashed-{tmp_path.name}"
    config = spark_input_job(
        spark_cluster,
        cluster_kafka,
        tmp_path,
        **{
            f"spark.conf.spark.executorEnv.{crash_points.ENV}": point,
            f"spark.conf.spark.executorEnv.{crash_points.ONCE_ENV}": str(marker),
        },
    )
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    assert status == 0, err[-4000:]
    assert marker.exists(), f"no container reached {point}"
    expected = collections.Counter(range(ROWS))
    directory = current_output_directory(Config(config), "spark", "out")
    plain = spark.read.parquet(str(directory)).collect()
    assert collections.Counter(r["id"] for r in plain) == expected, "a plain reader of the stream directory"
    ours = read_output(spark, "out", Config(config)).collect()
    assert collections.Counter(r["id"] for r in ours) == expected
    assert spark_cluster.containers() == []
