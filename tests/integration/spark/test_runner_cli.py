"""``samza-nb run --runner spark`` end to end: a process of its own making its own SparkSession from
``spark.master``, its containers the tasks of one Spark job."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.integration.spark.test_runner import LINES, ROOT, STREAMS, expected_lines, file_job, recorded


def test_samza_nb_run_with_the_spark_runner_runs_every_container_to_the_end(tmp_path: Path) -> None:
    config = file_job(tmp_path, **{"spark.master": "local[2,2]", "spark.conf.spark.default.parallelism": "2"})
    values = {k: v for k, v in config.items() if k != "test.record"}
    values.update({f"systems.file.streams.{s}.path": f"{s}.txt" for s in STREAMS})  # relative: the cwd
    values["test.record"] = "record.txt"
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
    done = subprocess.run(
        [sys.executable, "-m", "samza_nb", "run", "--runner", "spark", "--config-path", "job.properties"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    summary = done.stdout.strip().splitlines()[-1]
    total = len(STREAMS) * LINES
    assert summary.startswith(f"samza-nb: {config.job_name()}: processed {total} messages in "), summary
    assert f"SystemStreamPartition [file, a, 0] [file.a#0={LINES - 1}]" in summary, summary
    rows = recorded(tmp_path)
    assert Counter(m for *_, m in rows) == Counter(expected_lines())
    assert len({pid for _, pid, _, _ in rows}) == 2, "two container processes"
