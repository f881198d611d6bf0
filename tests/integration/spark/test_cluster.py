"""The Spark runner on a standalone cluster (``spark_cluster``): a master and two workers on 127.0.0.1, each
worker in a mount namespace that hides this test run's temp directories, as separate hosts would.

The driver is a ``samza-nb run --runner spark`` process (the test process already has a local SparkSession,
and one process holds one SparkContext) working in the test's private ``tmp_path``; inputs and checkpoints
are on the Kafka-protocol broker ``cluster_kafka``; the tasks record what they process in the cluster's
shared directory.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.spark import read_output
from samza_nb.systems.spark.outputs import current_output_directory
from tests.eventually import eventually
from tests.integration.spark.cluster import SparkCluster

pytestmark = [pytest.mark.spark_cluster, pytest.mark.timeout(300)]

ROOT = Path(__file__).parents[3]
PARTITIONS, MESSAGES = 2, 30
CLI = (sys.executable, "-m", "samza_nb", "run", "--runner", "spark", "--no-progress")
RUN_TIMEOUT_S = 150.0
"""A safety net for a driver run: the job must end by itself well before."""


def cluster_job(
    cluster: SparkCluster, broker: DevBroker, tmp_path: Path, **extra: str
) -> tuple[dict[str, str], Path]:
    """A 2-container job over a new 2-partition Kafka topic with Kafka checkpoints on the cluster; the tasks
    record into a file of the shared directory (returned)."""
    from tests.integration.kafka.helpers import create_topic, kafka_config

    topic = f"cluster-{uuid.uuid4().hex[:8]}"
    asyncio.run(create_topic(broker.bootstrap_servers, topic, PARTITIONS))
    record = cluster.shared / f"{topic}.record"
    config = kafka_config(
        broker.bootstrap_servers,
        **{
            "job.name": topic,
            "task.class": "tests.integration.spark.runner_tasks.RecordUntilEnd",
            "task.inputs": f"kafka.{topic}",
            "job.container.count": "2",
            "job.default.system": "kafka",
            "job.logged.store.base.dir": str(tmp_path / "state"),
            "task.commit.ms": "200",
            "cluster-manager.container.status.interval.ms": "100",
            "test.record": str(record),
            "spark.master": cluster.master_url,
            "spark.conf.spark.driver.host": "127.0.0.1",
            "spark.conf.spark.driver.bindAddress": "127.0.0.1",
            "spark.conf.spark.executor.memory": "512m",
            "spark.conf.spark.task.maxFailures": "4",
            **extra,
        },
    )
    return config, record


def spark_output(cluster: SparkCluster, task: str) -> dict[str, str]:
    """Config of a job that runs ``runner_tasks.<task>`` and writes the Spark system ``spark``'s outputs under
    its own directory of the cluster's shared directory."""
    return {
        "task.class": f"tests.integration.spark.runner_tasks.{task}",
        "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
        "systems.spark.samza.offset.default": "oldest",
        "job.shared.dir": str(cluster.shared / uuid.uuid4().hex[:8]),
    }


def produce(broker: DevBroker, topic: str, values: list[str]) -> None:
    """Send ``values`` to every partition of ``topic``."""
    from tests.integration.kafka.helpers import produce as send

    async def go() -> None:
        for partition in range(PARTITIONS):
            await send(broker.bootstrap_servers, topic, [v.encode() for v in values], partition=partition)

    asyncio.run(go())


def start_driver(config: dict[str, str], tmp_path: Path) -> subprocess.Popen[str]:
    """``samza-nb run --runner spark`` on ``config`` as a process working in ``tmp_path``."""
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    return subprocess.Popen(
        [*CLI, "--config-path", "job.properties"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(driver: subprocess.Popen[str], cluster: SparkCluster) -> tuple[int, str, str]:
    """Wait (up to the safety net) for the driver to end by itself: (status, stdout, stderr)."""
    try:
        out, err = driver.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        driver.kill()
        out, err = driver.communicate()
        raise AssertionError(
            f"the job did not end by itself within {RUN_TIMEOUT_S:g} s\n{err[-4000:]}\n{cluster.describe()}"
        ) from None
    return driver.returncode, out, err


def recorded(record: Path) -> Counter[str]:
    """How often each message was recorded (complete lines only)."""
    if not record.exists():
        return Counter()
    lines = [line for line in record.read_text().splitlines(keepends=True) if line.endswith("\n")]
    return Counter(line.split(" ")[-1].strip() for line in lines)


def expected() -> set[str]:
    return {f"m{i}" for i in range(MESSAGES)}


def test_workers_see_the_shared_dir_and_not_the_drivers_files(
    spark_cluster: SparkCluster, tmp_path: Path
) -> None:
    (tmp_path / "private.txt").write_text("the driver's")
    (spark_cluster.shared / "shared.txt").write_text("everyone's")
    probe = f"""
import json, os, sys
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master({spark_cluster.master_url!r}).config("spark.ui.enabled", "false")
         .config("spark.driver.host", "127.0.0.1").config("spark.executor.memory", "512m").getOrCreate())
private, shared = {str(tmp_path / "private.txt")!r}, {str(spark_cluster.shared / "shared.txt")!r}
def look(_):
    yield (os.path.exists(private), os.path.exists(shared), sys.executable)
print(json.dumps(spark.sparkContext.parallelize(range(4), 4).mapPartitions(look).collect()))
spark.stop()
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == [[False, True, sys.executable]] * 4


def test_a_two_container_kafka_job_runs_on_the_cluster_and_ends_by_itself(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    config, record = cluster_job(spark_cluster, cluster_kafka, tmp_path)
    topic = config["job.name"]
    produce(cluster_kafka, topic, [f"m{i}" for i in range(MESSAGES)] + ["end"])
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    assert status == 0, err[-4000:]
    assert recorded(record) == Counter({m: PARTITIONS for m in expected()})
    assert spark_cluster.containers() == []


def executor_of(cluster: SparkCluster, pid: int) -> int:
    """The executor JVM that ``pid`` (a container) descends from."""
    executors = set(cluster.executors())
    current = pid
    while current > 1:
        if current in executors:
            return current
        with open(f"/proc/{current}/stat") as stat:
            current = int(stat.read().rsplit(")", 1)[-1].split()[1])
    raise AssertionError(f"container process {pid} runs under no executor of the cluster")


@pytest.mark.parametrize("round_", range(int(os.environ.get("SAMZA_NB_CLUSTER_KILLS", "1"))))
def test_losing_an_executor_retries_its_container_and_the_job_ends_by_itself(
    spark: Any, spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path, round_: int
) -> None:
    """``SAMZA_NB_CLUSTER_KILLS=5`` runs it five times in a row (on the same cluster)."""
    config, record = cluster_job(
        spark_cluster, cluster_kafka, tmp_path, **spark_output(spark_cluster, "ForwardUntilEnd")
    )
    topic = config["job.name"]
    produce(cluster_kafka, topic, [f"m{i}" for i in range(MESSAGES)])
    driver = start_driver(config, tmp_path)
    try:
        eventually(
            lambda: set(recorded(record)) == expected() and min(recorded(record).values()) >= PARTITIONS,
            timeout=120,
            message="both containers processed their partition",
        )
        containers = eventually(lambda: spark_cluster.containers(), message="the containers' processes")
        victim = executor_of(spark_cluster, containers[0])
        spark_cluster.kill_executor(victim)
        produce(cluster_kafka, topic, ["end"])
        status, _, err = finish(driver, spark_cluster)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert status == 0, err[-4000:]
    counts = recorded(record)
    assert set(counts) == expected() and min(counts.values()) >= PARTITIONS, "nothing lost"
    assert spark_cluster.containers() == [], "no container outlives the job"
    rows = read_output(spark, "out", Config(config)).collect()
    exact = Counter((m, p) for m in expected() for p in range(PARTITIONS))
    assert Counter((r["message"], r["partition"]) for r in rows) == exact, (
        "the committed output, exactly once"
    )


def test_losing_a_whole_worker_leaves_plain_spark_and_read_output_exactly_once(
    spark: Any, spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    """A worker's JVM, its executors and their containers killed at once mid-job (messages still arriving):
    the retried containers resume from their checkpoints, and what the dead attempts wrote but did not
    commit is read by nobody: not by ``read_output``, not by a plain ``spark.read.parquet`` of the
    stream's directory (its ``_spark_metadata`` log)."""
    config, record = cluster_job(
        spark_cluster, cluster_kafka, tmp_path, **spark_output(spark_cluster, "ForwardUntilEnd")
    )
    config["task.commit.ms"] = "50"
    topic = config["job.name"]
    produce(cluster_kafka, topic, [f"m{i}" for i in range(MESSAGES // 2)])
    driver = start_driver(config, tmp_path)
    victim = None
    try:
        eventually(lambda: len(recorded(record)) > 0, timeout=120, message="the containers process")
        containers = eventually(lambda: spark_cluster.containers(), message="the containers' processes")
        victim = spark_cluster.worker_of(containers[0])
        produce(cluster_kafka, topic, [f"m{i}" for i in range(MESSAGES // 2, MESSAGES)])
        assert spark_cluster.kill_whole_worker(victim), "the worker's processes"
        produce(cluster_kafka, topic, ["end"])
        status, _, err = finish(driver, spark_cluster)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        if victim is not None:
            spark_cluster.restart_worker(victim)
    assert status == 0, err[-4000:]
    exact = Counter((m, p) for m in expected() for p in range(PARTITIONS))
    rows = read_output(spark, "out", Config(config)).collect()
    assert Counter((r["message"], r["partition"]) for r in rows) == exact, "read_output, exactly once"
    directory = current_output_directory(Config(config), "spark", "out")
    plain = spark.read.parquet(str(directory)).collect()
    assert Counter((r["message"], r["partition"]) for r in plain) == exact, "plain Spark, exactly once"
