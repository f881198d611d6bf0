"""``samza-nb run --runner spark`` end to end: a process of its own making its own SparkSession from
``spark.master``, its containers the tasks of one Spark job; SIGTERM stops it gracefully with the summary
line, and when the driver is killed its containers exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from samza_nb.runtime.dev_broker import free_port
from tests.eventually import eventually
from tests.integration.spark.test_runner import ROOT, append_words, container_processes, log_job, recorded

pytestmark = pytest.mark.slow  # each test starts a process with a SparkSession (a JVM) of its own


def start(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    config = log_job(
        tmp_path, **{"spark.master": "local[2,2]", "cluster-manager.jobcoordinator.url.port": str(port)}
    )
    values = {**config, "test.record": "record.txt"}  # relative: the driver's working directory
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--runner", "spark", "--config-path", "job.properties"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_samza_nb_run_with_the_spark_runner_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    written = append_words(tmp_path, range(10))
    run = start(tmp_path, free_port())
    eventually(lambda: Counter(m for *_, m in recorded(tmp_path)) == written, timeout=180)
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err
    assert "SIGTERM: stopping every container gracefully" in err, err
    summary = out.strip().splitlines()[-1]
    total = sum(written.values())
    assert summary.startswith("samza-nb: spark-log-") and f": processed {total} messages in " in summary
    assert "Partition 0 [log.words#0=49]" in summary, summary  # committed on the way out
    assert len({pid for _, pid, _, _ in recorded(tmp_path)}) == 2, "two container processes"


def test_the_containers_exit_when_the_driver_is_killed(tmp_path: Path) -> None:
    append_words(tmp_path, range(10))
    port = free_port()
    run = start(tmp_path, port)
    url = f"http://127.0.0.1:{port}"
    pids = eventually(lambda: len(found := container_processes(url)) == 2 and found, timeout=180)
    run.kill()
    run.communicate(timeout=60)
    eventually(lambda: not container_processes(url), timeout=60, message=f"containers {pids} exited")
