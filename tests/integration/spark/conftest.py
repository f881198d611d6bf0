"""Spark tests run real PySpark in local mode: one ``local[2,2]`` SparkSession for the whole session.

Two task slots (the Spark runner's tests split a job over two containers), a failed task retried once, the
UI off, two shuffle partitions: tiny data, started once (~5-10 s). Without pyspark or Java the tests skip
on a developer machine and fail loudly under ``CI=true`` (``tests/requirements.py``).

The cluster tests (marker ``spark_cluster``) get ``spark_cluster``: a standalone master and two workers on
127.0.0.1, each worker in a mount namespace that hides the test run's temp directories (``cluster.py``),
and ``cluster_kafka``, a Kafka-protocol broker for their checkpoints and inputs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.spark.cluster import SparkCluster
from tests.requirements import require, unavailable

ROOT = Path(__file__).parents[3]


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The session's SparkSession (do not stop it)."""
    sql = require("pyspark.sql", "the spark extra (pip install -e '.[spark]') runs the Spark tests")
    if shutil.which("java") is None:
        unavailable("java is not on PATH: PySpark needs a JVM (scripts/spark-test-deps.sh installs one)")
    # SparkContext takes its workers' Python from PYSPARK_PYTHON (not spark.pyspark.python): this one.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        sql.SparkSession.builder.master("local[2,2]")
        .appName("samza-nb-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparkCluster]:
    """A started standalone cluster (master, two workers of two cores), torn down at the end of the session:
    no process of it is left."""
    require("pyspark", "the spark extra (pip install -e '.[spark]') runs the Spark cluster tests")
    if shutil.which("java") is None:
        unavailable("java is not on PATH: Spark's master and workers need a JVM (scripts/spark-test-deps.sh)")
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        unavailable(f"unshare -m fails here ({probe.stderr.strip()}): the cluster's workers need it (root)")
    hidden = [tmp_path_factory.getbasetemp(), *(p for p in [ROOT / ".samza_nb"] if p.is_dir())]
    cluster = SparkCluster(sys.executable, hidden)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
    left = cluster.processes()
    assert not left, f"processes of the Spark cluster survived its teardown: {left}"


@pytest.fixture(scope="session")
def cluster_kafka(request: pytest.FixtureRequest) -> DevBroker:
    """A Kafka-protocol broker for the cluster tests (do not kill it)."""
    require("aiokafka", "the kafka extra (pip install -e '.[kafka]') runs the Spark cluster tests")
    broker = DevBroker()
    request.addfinalizer(broker.stop)
    broker.start()
    return broker


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory is a Spark test."""
    for item in items:
        if "integration/spark" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.spark)
