"""Queries into a running job whose containers are the tasks of a Spark job (the session's local Spark):
the coordinator on the driver routes a key to the container process holding it and unions SQL over both."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb.coordinator.status import JobStatus
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.partitioner import key_partition
from tests.eventually import eventually

from .test_runner import ROOT, TASKS, append_words, log_job, recorded


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The containers import the test tasks from the repository (the driver's sys.path reaches them)."""
    monkeypatch.syspath_prepend(str(ROOT))


def all_committed(status: JobStatus) -> bool:
    """Each of the four input partitions reported its 15 messages processed and committed up to the last
    (a report comes after the commit it tells of)."""
    partitions = [
        p for report in status.reports.values() for task in report.tasks for p in task.get("partitions", ())
    ]
    return len(partitions) == 4 and all(
        p["processed"] == 15 and p["committed-offset"] == p["processed-offset"] for p in partitions
    )


def test_lookups_and_sql_reach_the_spark_containers(spark: Any, tmp_path: Path) -> None:
    config = log_job(
        tmp_path,
        **{
            "task.class": f"{TASKS}.Count",
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.key.serde": "string",
            "stores.counts.msg.serde": "long",
        },
    )
    written = append_words(tmp_path, range(3))  # w<p>-<k> three times each, in partition p
    runner = SparkJobRunner(config, spark)
    runner.start()
    try:
        eventually(lambda: Counter(m.split("=")[0] for *_, m in recorded(tmp_path)) == written, timeout=120)
        (coordinator,) = runner.coordinators()
        model = coordinator.job_model
        holder = {t.changelog_partition: cid for cid, c in model.containers.items() for t in c.tasks.values()}
        # The words sit in the partition they were sent to, not the one their text hashes to: a lookup
        # that misses the owner is asked of the others, and the answer names where the key was.
        assert key_partition(b"w2-3", 4) != 2
        answer = coordinator.queries.get("counts", "w2-3")
        assert (answer.found, answer.value, answer.partition, answer.container) == (True, 3, 2, holder[2])
        assert not coordinator.queries.get("counts", "nowhere").found
        # SQL reads what the containers committed: once every task reported its last message committed,
        # the union holds every word with its count, and the committed lookup agrees.
        eventually(lambda: all_committed(coordinator.job_status()), timeout=60, message="all committed")
        rows = coordinator.queries.sql("counts", "SELECT count(*), sum(value) FROM counts").rows
        assert rows == [(20, 60)]
        per_partition = coordinator.queries.sql(
            "counts", "SELECT partition, count(*), sum(value) FROM counts GROUP BY partition ORDER BY 1"
        ).rows
        assert per_partition == [(p, 5, 15) for p in range(4)]
        answer = coordinator.queries.get("counts", "w0-1", committed=True)
        assert (answer.value, answer.container) == (3, holder[0])
    finally:
        runner.stop()
        assert runner.join(timeout=90)
    assert runner.failure is None
