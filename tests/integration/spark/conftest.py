"""Spark tests run real PySpark in local mode: one ``local[2,2]`` SparkSession for the whole session.

Two task slots (the Spark runner's tests split a job over two containers), a failed task retried once, the
UI off, two shuffle partitions: tiny data, started once (~5-10 s). Without pyspark or Java the tests skip
on a developer machine and fail loudly under ``CI=true`` (``tests/requirements.py``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from tests.requirements import require, unavailable


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory is a Spark test."""
    for item in items:
        if "integration/spark" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.spark)
