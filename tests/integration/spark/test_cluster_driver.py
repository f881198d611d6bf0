"""A job runs once on the standalone cluster (``spark_cluster``, with free slots for a second application):
a second driver of a running job (same ``job.name`` and ``job.id``) is refused in one line naming the running
driver, and the committed output stays exact; a driver killed with -9 is taken over by the next one, which
says so and finishes the job, its committed output exactly once (docs/concepts/guarantees.md)."""

from __future__ import annotations

import socket
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.spark import read_output
from tests.eventually import eventually
from tests.integration.spark.cluster import SparkCluster
from tests.integration.spark.test_cluster import (
    MESSAGES,
    PARTITIONS,
    cluster_job,
    expected,
    produce,
    recorded,
    spark_output,
    start_driver,
)

pytestmark = [pytest.mark.spark_cluster, pytest.mark.timeout(1200)]


def kill(driver: subprocess.Popen[str]) -> None:
    if driver.poll() is None:
        driver.kill()
    driver.communicate()


def test_a_second_driver_is_refused_and_a_killed_one_is_taken_over_with_the_output_exact(
    spark: Any, spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    config, record = cluster_job(
        spark_cluster,
        cluster_kafka,
        tmp_path,
        **spark_output(spark_cluster, "ForwardUntilEnd"),
        **{"spark.conf.spark.cores.max": "2"},  # each application 2 of the 4 cores: a second one has slots
    )
    topic = config["job.name"]
    produce(cluster_kafka, topic, [f"m{i}" for i in range(MESSAGES)])
    (second_dir := tmp_path / "second").mkdir()
    (third_dir := tmp_path / "third").mkdir()
    first = start_driver(config, tmp_path)
    second: subprocess.Popen[str] | None = None
    third: subprocess.Popen[str] | None = None
    try:
        eventually(
            lambda: set(recorded(record)) == expected() and min(recorded(record).values()) >= PARTITIONS,
            timeout=180,
            message="the first driver's containers processed their partitions",
        )
        second = start_driver(config, second_dir)
        try:
            _, err = second.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            kill(second)
            raise AssertionError(f"the second driver did not end: {spark_cluster.describe()}") from None
        status = second.returncode
        lines = [line for line in err.splitlines() if line.strip() and "WARN" not in line]
        assert status != 0, err[-4000:]
        assert len(lines) == 1, err[-4000:]
        assert "is already running: its driver is process" in lines[0], lines[0]
        assert f"process {first.pid} on host {socket.gethostname()}" in lines[0], lines[0]
        assert first.poll() is None, "the first driver runs on"

        first.kill()  # -9: its claim stays on the coordinator stream
        first.communicate()
        eventually(lambda: spark_cluster.containers() == [], timeout=120, message="its containers ended")
        third = start_driver(config, third_dir)
        produce(cluster_kafka, topic, ["end"])
        try:  # (a new application on the cluster: its executors start slowly on a loaded machine)
            _, err = third.communicate(timeout=400)
        except subprocess.TimeoutExpired:
            kill(third)
            raise AssertionError(f"the third driver did not end: {spark_cluster.describe()}") from None
        status = third.returncode
        assert status == 0, err[-4000:]
        assert f"taking over from the driver process {first.pid} on host {socket.gethostname()}" in err
        assert f"its process {first.pid} is gone from this host" in err
    finally:
        for driver in (first, second, third):
            if driver is not None:
                kill(driver)
    rows = read_output(spark, "out", Config(config)).collect()
    exact = Counter((m, p) for m in expected() for p in range(PARTITIONS))
    got = Counter((r["message"], r["partition"]) for r in rows)
    assert got == exact, "the committed output, exactly once"
    assert spark_cluster.containers() == []
