"""A small configured parquet input with spark.partitions is partitioned in the driver (pyarrow, no Spark
job), exactly as Spark's write partitions it: the same rows in the same partition, sorted by time."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from samza_nb.systems.spark.inputs.materialize import prepare_input
from tests.integration.spark.bounded_support import job_config, no_registrations

__all__ = ["no_registrations"]

PARTITIONS = 3


def source(directory: Path) -> Path:
    """600 rows in 3 files: 17 keys (one None), shuffled timestamps (some None), an id per row."""
    rng = random.Random(7)
    directory.mkdir()
    base = dt.datetime(2026, 1, 1)
    for part in range(3):
        ids = list(range(part * 200, part * 200 + 200))
        keys = [None if i % 50 == 0 else f"user-{i % 17}" for i in ids]
        times = [None if i % 61 == 0 else base + dt.timedelta(seconds=rng.randrange(10_000)) for i in ids]
        pq.write_table(pa.table({"id": ids, "user": keys, "at": times}), directory / f"part{part}.parquet")
    return directory


def partitions(config: Any) -> list[list[dict[str, Any]]]:
    manifest = prepare_input(config, "spark", "clicks")
    return [
        [row for f in manifest.files(n) for row in pq.read_table(f).to_pylist()]
        for n in range(len(manifest.partitions))
    ]


def test_the_driver_partitions_a_small_input_as_spark_does_and_runs_no_spark_job(
    spark: Any, tmp_path: Path
) -> None:
    path = source(tmp_path / "clicks")
    roles = {
        "systems.spark.streams.clicks.spark.path": str(path),
        "systems.spark.streams.clicks.spark.key": "user",
        "systems.spark.streams.clicks.spark.timestamp": "at",
        "systems.spark.streams.clicks.spark.partitions": str(PARTITIONS),
    }
    tracker = spark.sparkContext.statusTracker()
    jobs_before = set(tracker.getJobIdsForGroup(None))
    local = partitions(job_config(tmp_path / "local", **roles))
    assert set(tracker.getJobIdsForGroup(None)) == jobs_before, "the driver wrote it: no Spark job"
    by_spark = partitions(
        job_config(tmp_path / "spark", **roles, **{"systems.spark.spark.local.write.max.bytes": "0"})
    )
    assert set(tracker.getJobIdsForGroup(None)) != jobs_before, "max.bytes 0: Spark wrote it"
    assert len(local) == len(by_spark) == PARTITIONS
    for n in range(PARTITIONS):
        assert sorted(r["id"] for r in local[n]) == sorted(r["id"] for r in by_spark[n]), f"partition {n}"
        for rows in (local[n], by_spark[n]):  # nulls first, then by time, as Spark sorts
            times = [r["at"] for r in rows]
            nulls = times.count(None)
            assert times[:nulls] == [None] * nulls and times[nulls:] == sorted(times[nulls:])
    assert sum(len(rows) for rows in local) == 600
    assert all(local), "17 keys over 3 partitions: none empty"
