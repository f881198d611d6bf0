"""A bounded job on the Spark runner restarted from a new driver process: after a graceful stop, and after
kill -9 of the driver, the new driver resumes from the checkpoints and ``read_output`` holds every row once;
``reset.offset`` processes everything again into a new output generation, read instead of the old."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from samza_nb.systems.spark import read_output
from tests.eventually import eventually
from tests.integration.spark.restart_driver import ROWS, job_config
from tests.integration.spark.test_runner import ROOT, container_processes

DRIVER = [sys.executable, "-m", "tests.integration.spark.restart_driver"]


def start_driver(base: Path, mode: str, *extra: str) -> subprocess.Popen[str]:
    """A driver process (see restart_driver) in its own session, its stdout a pipe."""
    return subprocess.Popen(
        [*DRIVER, str(base), mode, *extra],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )


def run_driver(base: Path, mode: str, *extra: str) -> list[str]:
    """Run a driver to its end; its stdout lines (it must exit 0)."""
    done = subprocess.run(
        [*DRIVER, str(base), mode, *extra], cwd=ROOT, capture_output=True, text=True, timeout=240, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


def processed(lines: list[str]) -> int:
    """The last count the driver printed."""
    return max(
        (int(line.split()[1]) for line in lines if line.startswith(("processed ", "done "))), default=0
    )


def output_ids(spark: Any, base: Path, **extra: str) -> collections.Counter[int]:
    """How many times each row's id is in the committed output."""
    rows = read_output(spark, "out", job_config(str(base), **extra)).collect()
    return collections.Counter(int(row["id"]) for row in rows)


@pytest.mark.timeout(600)
def test_a_job_restarted_from_new_drivers_after_a_stop_and_a_kill_9_writes_every_row_once(
    spark: Any, tmp_path: Path
) -> None:
    first = processed(run_driver(tmp_path, "stop-at-700"))
    assert 700 <= first < ROWS, "the first driver stopped the job part-way"
    # the second driver resumes, and is killed (kill -9) mid-job
    driver = start_driver(tmp_path, f"hang-at-{first + 300}")
    assert driver.stdout is not None
    url = driver.stdout.readline().split()[1]
    second = 0
    for line in driver.stdout:
        second = int(line.split()[1]) if line.startswith("processed ") else second
        if second >= first + 300:
            break
    assert second < ROWS, "the second driver resumed after the first one's checkpoints"
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    driver.stdout.close()
    eventually(lambda: container_processes(url) == [], timeout=90)  # no container outlives its driver
    third = processed(run_driver(tmp_path, "run"))
    assert third < ROWS - first, "the third driver resumed too"
    assert output_ids(spark, tmp_path) == collections.Counter(range(ROWS)), "every row once"
    # reset.offset: everything again, into a new generation that read_output reads instead of the old
    reset = "systems.spark.streams.rows.samza.reset.offset=true"
    assert processed(run_driver(tmp_path, "run", reset)) == ROWS
    assert output_ids(spark, tmp_path) == collections.Counter(range(ROWS))
