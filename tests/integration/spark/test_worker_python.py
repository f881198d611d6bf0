"""Spark's workers run the Python Spark is configured with (not the driver's): when that Python cannot import
samza_nb, a job on the Spark runner and an input Spark repartitions fail with one line naming the fix, not a
JVM trace."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb import ConfigError
from samza_nb.runtime import LocalJobRunner
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.session import WORKER_PYTHON_KEY, WORKER_PYTHON_MISSING
from tests.integration.spark.bounded_support import job_config, no_registrations, recorder
from tests.integration.spark.test_runner import ROOT, file_job

__all__ = ["no_registrations"]

BLOCKER = '''
import sys


class _NoSamzaNb:
    """This Python has no samza_nb (a worker's Python without the package)."""

    def find_spec(self, name, path=None, target=None):
        if name == "samza_nb" or name.startswith("samza_nb."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NoSamzaNb())
'''


@pytest.fixture
def workers_without_samza_nb(spark: Any, tmp_path: Path) -> Iterator[None]:
    """The session's workers run a Python that cannot import samza_nb while the test runs."""
    block = tmp_path / "block"
    block.mkdir()
    (block / "sitecustomize.py").write_text(BLOCKER)
    wrapper = tmp_path / "python-without-samza-nb"
    wrapper.write_text(
        f'#!/bin/sh\nPYTHONPATH="{block}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    context = spark.sparkContext
    before = context.pythonExec
    context.pythonExec = str(wrapper)
    try:
        yield
    finally:
        context.pythonExec = before


def one_line_naming_the_fix(error: BaseException) -> None:
    message = str(error)
    assert "\n" not in message and message.startswith(WORKER_PYTHON_MISSING), message
    assert "spark.pyspark.python" in message and "Py4J" not in message


@pytest.mark.usefixtures("workers_without_samza_nb")
def test_the_runner_on_workers_without_samza_nb_fails_in_one_line(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        SparkJobRunner(file_job(tmp_path), spark).run(timeout=120)
    one_line_naming_the_fix(raised.value)


@pytest.mark.usefixtures("workers_without_samza_nb")
def test_an_input_spark_repartitions_on_workers_without_samza_nb_fails_in_one_line(
    spark: Any, tmp_path: Path
) -> None:
    rows = spark.createDataFrame([(f"u{i}", i) for i in range(10)], "user string, n long")
    register_dataframe("clicks", rows, key="user", partitions=2)
    with pytest.raises(ConfigError) as raised:
        LocalJobRunner(job_config(tmp_path), recorder([])).run(timeout=60)
    one_line_naming_the_fix(raised.value)
    assert os.environ.get("PYSPARK_PYTHON") != str(tmp_path / "python-without-samza-nb")


@pytest.mark.slow  # a process with a SparkSession (a JVM) of its own
def test_the_workers_of_a_session_the_runner_makes_run_the_python_the_config_names(tmp_path: Path) -> None:
    used = tmp_path / "python-used"
    wrapper = tmp_path / "workers-python"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> "{used}"\nexec {sys.executable} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    config = file_job(tmp_path, **{"spark.master": "local[2,2]", WORKER_PYTHON_KEY: str(wrapper)})
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    run = subprocess.run(
        [sys.executable, "-m", "samza_nb", "run", "--runner", "spark", "--config-path", "job.properties"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert used.exists(), f"Spark's workers did not run {WORKER_PYTHON_KEY} = {wrapper}"
