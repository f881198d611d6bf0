"""Spark inputs and outputs on the standalone cluster (``spark_cluster``): under ``job.shared.dir`` (a
directory every executor reaches at the same path), written by Spark's executors, read by containers on
other "hosts", and read back exactly once; without ``job.shared.dir`` the job is refused in one line."""

from __future__ import annotations

import collections
import os
import socket
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from samza_nb import Config
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.spark import read_output
from tests.integration.spark.cluster import SparkCluster
from tests.integration.spark.test_cluster import (
    MESSAGES,
    PARTITIONS,
    cluster_job,
    finish,
    produce,
    recorded,
    spark_output,
    start_driver,
)

pytestmark = [pytest.mark.spark_cluster, pytest.mark.timeout(300)]

ROWS = 2000


def source(cluster: SparkCluster, name: str) -> Path:
    """Parquet of ``ROWS`` rows (``id``, ``k``) in the shared directory (Spark's executors read it)."""
    path = cluster.shared / f"{name}-source.parquet"
    pq.write_table(pa.table({"id": list(range(ROWS)), "k": [f"k{i % 17}" for i in range(ROWS)]}), path)
    return path


def spark_input_job(cluster: SparkCluster, broker: DevBroker, tmp_path: Path, **extra: str) -> dict[str, str]:
    """Two containers reading a configured parquet input (repartitioned by Spark into 2 partitions) and
    writing each row to the Spark output ``out``; Kafka checkpoints and coordinator stream."""
    config, _ = cluster_job(cluster, broker, tmp_path, **spark_output(cluster, "ForwardRows"))
    path = source(cluster, config["job.name"])
    config.update(
        {
            "task.inputs": "spark.rows",
            "systems.spark.streams.rows.spark.path": str(path),
            "systems.spark.streams.rows.spark.key": "k",
            "systems.spark.streams.rows.spark.partitions": "2",
            "systems.spark.spark.local.write.max.bytes": "0",  # Spark's executors write it
            **extra,
        }
    )
    return config


def test_a_spark_input_and_output_under_the_shared_dir_are_exact_on_the_cluster(
    spark: Any, spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    config = spark_input_job(spark_cluster, cluster_kafka, tmp_path)
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    assert status == 0, err[-4000:]
    rows = read_output(spark, "out", Config(config)).collect()
    assert collections.Counter(r["id"] for r in rows) == collections.Counter(range(ROWS))
    assert spark_cluster.containers() == []
    assert not (tmp_path / "state" / f"{config['job.name']}-1" / "spark-input").exists(), (
        "nothing of the input on the driver's private disk"
    )


def test_without_the_shared_dir_the_job_is_refused_in_one_line_naming_the_key(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    config = spark_input_job(spark_cluster, cluster_kafka, tmp_path)
    del config["job.shared.dir"]
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    assert status == 2
    lines = [line for line in err.splitlines() if line.strip() and "WARN" not in line]
    assert len(lines) == 1 and "job.shared.dir" in lines[0], err


def test_a_shared_dir_the_workers_do_not_share_fails_the_job_before_it_starts_naming_host_and_dir(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    driver_only = tmp_path / "driver-only"  # the workers do not see the test's temp directories
    config = spark_input_job(spark_cluster, cluster_kafka, tmp_path, **{"job.shared.dir": str(driver_only)})
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)  # main hung here for 15 min
    lines = [line for line in err.splitlines() if line.strip() and "WARN" not in line]
    assert status == 2 and len(lines) == 1, err[-3000:]
    assert "job.shared.dir" in lines[0] and str(driver_only) in lines[0] and socket.gethostname() in lines[0]
    assert not (driver_only / f"{config['job.name']}-1" / "spark-input").exists(), "no input written"
    assert spark_cluster.containers() == []


HOG = """
import sys
from pyspark.sql import SparkSession

spark = (
    SparkSession.builder.master(sys.argv[1]).appName("hog")
    .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    .config("spark.executor.memory", "512m").config("spark.ui.enabled", "false").getOrCreate()
)
spark.sparkContext.parallelize(range(8), 8).count()
print("holding", flush=True)
sys.stdin.read()  # until the test closes it
spark.stop()
"""


def test_a_job_waiting_for_slots_another_application_holds_says_which_and_then_refuses_naming_it(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    hog = subprocess.Popen(
        [sys.executable, "-c", HOG, spark_cluster.master_url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, SPARK_LOCAL_IP="127.0.0.1"),
    )
    try:
        assert hog.stdout is not None and hog.stdout.readline().strip() == "holding"  # every core taken
        config, _ = cluster_job(
            spark_cluster,
            cluster_kafka,
            tmp_path,
            **{
                "cluster-manager.container.coordinator.timeout.ms": "15000",
                "spark.conf.spark.master.ui.port": str(spark_cluster.web_ui_port),
            },
        )
        status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    finally:
        assert hog.stdin is not None
        hog.stdin.close()
        hog.wait(timeout=120)
        if hog.stdout is not None:
            hog.stdout.close()
    lines = [line for line in err.splitlines() if line.strip() and "WARN" not in line]
    assert status == 2 and len(lines) == 2, err[-3000:]
    told, refused = lines
    assert "waiting for 2 Spark task slots, has 0" in told and "'hog' (4 cores)" in told, told
    assert "0 of the cluster's 4 cores free" in told and "spark.cores.max" in told, told
    assert "job.container.count" in refused and "'hog'" in refused, refused


SHIPPED_TASK = '''
from tests.integration.spark.runner_tasks import RecordUntilEnd


class Shipped(RecordUntilEnd):
    """A task in a module beside the job's properties, on the driver's private disk."""
'''


def test_a_task_module_beside_the_config_is_shipped_to_the_executors(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    module = f"shipped_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(SHIPPED_TASK)  # the workers do not see tmp_path
    config, record = cluster_job(
        spark_cluster, cluster_kafka, tmp_path, **{"task.class": f"{module}.Shipped"}
    )
    produce(cluster_kafka, config["job.name"], [f"m{i}" for i in range(MESSAGES)] + ["end"])
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    assert status == 0, err[-4000:]
    assert recorded(record) == collections.Counter({f"m{i}": PARTITIONS for i in range(MESSAGES)})
    assert spark_cluster.containers() == []
