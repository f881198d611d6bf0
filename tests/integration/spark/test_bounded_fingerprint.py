"""What decides that a bounded input changed: rows, not object identities; files a plan reads; the job's
own directory (another job, or a new job.id, starts from its own written input)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from samza_nb import SamzaError
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.spark import register_dataframe
from tests.integration.spark.bounded_support import Seen, job_config, no_registrations, recorder

__all__ = ["no_registrations"]


def run(config: Any) -> list[Any]:
    log: list[Seen] = []
    LocalJobRunner(config, recorder(log)).run(timeout=60)
    return [seen.message for seen in log]


def test_the_same_python_rows_made_again_are_not_a_change(spark: Any, tmp_path: Path) -> None:
    rows = [(i, f"v{i}") for i in range(10)]
    register_dataframe("clicks", spark.createDataFrame(rows, "k int, v string"), value="v")
    assert sorted(run(job_config(tmp_path))) == sorted(f"v{i}" for i in range(10))
    # The cell runs again (or the kernel restarted): a new RDD with the very same rows resumes.
    register_dataframe("clicks", spark.createDataFrame(rows, "k int, v string"), value="v")
    assert run(job_config(tmp_path)) == []
    # Other rows are a change, refused once the job read the old ones.
    register_dataframe("clicks", spark.createDataFrame([*rows, (10, "v10")], "k int, v string"), value="v")
    with pytest.raises(SamzaError, match=r"stream 'clicks' changed"):
        run(job_config(tmp_path))


def test_a_file_added_under_a_registered_directory_is_a_change(spark: Any, tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    pq.write_table(pa.table({"id": list(range(5))}), source / "a.parquet")
    register_dataframe("clicks", spark.read.parquet(str(source)), value="id")
    assert sorted(run(job_config(tmp_path / "base"))) == list(range(5))
    pq.write_table(pa.table({"id": list(range(100, 105))}), source / "b.parquet")
    register_dataframe("clicks", spark.read.parquet(str(source)), value="id")
    with pytest.raises(SamzaError, match=r"stream 'clicks' changed"):
        run(job_config(tmp_path / "base"))
    reset = {"systems.spark.streams.clicks.samza.reset.offset": "true"}
    assert sorted(run(job_config(tmp_path / "base", **reset))) == [*range(5), *range(100, 105)]


def test_a_rewritten_configured_file_is_a_change_also_when_spark_writes_it(
    spark: Any, tmp_path: Path
) -> None:
    path = tmp_path / "users.parquet"
    pq.write_table(pa.table({"user": [f"u{i}" for i in range(6)], "n": list(range(6))}), path)
    configured = {
        "systems.spark.streams.clicks.spark.path": str(path),
        "systems.spark.streams.clicks.spark.key": "user",
        "systems.spark.streams.clicks.spark.value": "n",
        "systems.spark.streams.clicks.spark.partitions": "2",
        "systems.spark.spark.local.write.max.bytes": "0",  # Spark writes it, not the driver
    }
    assert sorted(run(job_config(tmp_path / "base", **configured))) == list(range(6))
    pq.write_table(pa.table({"user": [f"u{i}" for i in range(8)], "n": list(range(8))}), path)
    with pytest.raises(SamzaError, match=r"stream 'clicks' changed"):
        run(job_config(tmp_path / "base", **configured))


def test_a_new_job_id_or_another_job_starts_from_its_own_input(spark: Any, tmp_path: Path) -> None:
    register_dataframe("clicks", spark.range(0, 20, numPartitions=2), value="id")
    run(job_config(tmp_path))
    register_dataframe("clicks", spark.range(0, 25, numPartitions=2), value="id")
    with pytest.raises(SamzaError, match=r"use a new job\.id"):
        run(job_config(tmp_path))
    assert sorted(run(job_config(tmp_path, **{"job.id": "2"}))) == list(range(25))  # the advice works
    register_dataframe("clicks", spark.range(100, 110, numPartitions=1), value="id")
    assert sorted(run(job_config(tmp_path, **{"job.name": "another-job"}))) == list(range(100, 110))
