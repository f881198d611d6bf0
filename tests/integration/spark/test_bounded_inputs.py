"""Bounded Spark inputs: key partitioning, timestamp order, row-index offsets, seeking, column roles."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from samza_nb import ConfigError, SystemStreamPartition
from samza_nb.api.metadata import SSPMetadata
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.partitioner import key_partition
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.factory import SparkSystemAdmin, SparkSystemConsumer
from samza_nb.systems.spark.session import WORKER_PYTHON_MISSING
from tests.integration.spark.bounded_support import Seen, job_config, no_registrations, recorder

__all__ = ["no_registrations"]

EPOCH = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def clicks(spark: Any, rows: int = 120, users: int = 15) -> Any:
    """Rows (user, ts, n) with timestamps in shuffled order over 3 Spark partitions."""
    stamps = list(range(rows))
    random.Random(7).shuffle(stamps)
    data = [(f"u{i % users}", EPOCH + dt.timedelta(seconds=stamps[i]), i) for i in range(rows)]
    return spark.createDataFrame(data, "user string, ts timestamp, n long").repartition(3)


def run(config: Any, **kwargs: Any) -> list[Seen]:
    log: list[Seen] = []
    LocalJobRunner(config, recorder(log), **kwargs).run(timeout=60)
    return log


def test_rows_are_partitioned_by_key_and_sorted_by_timestamp(spark: Any, tmp_path: Path) -> None:
    register_dataframe("clicks", clicks(spark), key="user", timestamp="ts", partitions=4)
    log = run(job_config(tmp_path))
    assert len(log) == 120
    partition_of: dict[str, int] = {}
    for seen in log:
        assert partition_of.setdefault(seen.key, seen.partition) == seen.partition
        assert seen.partition == key_partition(seen.key.encode("utf-8"), 4)
        assert seen.key == seen.message["user"]
        assert seen.timestamp == int(seen.message["ts"].timestamp() * 1000)
    for partition in range(4):
        rows = [seen for seen in log if seen.partition == partition]
        assert [seen.offset for seen in rows] == [str(i) for i in range(len(rows))]
        stamps = [seen.timestamp for seen in rows]
        assert stamps == sorted(stamps)


def test_integer_keys_partition_by_their_decimal_form_and_every_partition_exists(
    spark: Any, tmp_path: Path
) -> None:
    frame = spark.createDataFrame([(k, f"v{k}") for k in (1, 2, 3)], "k long, v string")
    register_dataframe("clicks", frame, key="k", value="v", partitions=6)
    metadata = asyncio.run(SparkSystemAdmin("spark", job_config(tmp_path)).get_metadata(["clicks"]))
    assert sorted(metadata["clicks"]) == list(range(6))
    assert sum(1 for m in metadata["clicks"].values() if m == SSPMetadata(None, None, "0")) >= 3
    log = run(job_config(tmp_path))
    assert sorted((seen.key, seen.message) for seen in log) == [(1, "v1"), (2, "v2"), (3, "v3")]
    for seen in log:
        assert seen.partition == key_partition(str(seen.key).encode("utf-8"), 6)
        assert seen.timestamp is None


def test_without_partitions_each_part_file_is_a_partition_and_offsets_are_row_indexes(
    spark: Any, tmp_path: Path
) -> None:
    frame = spark.range(0, 30, numPartitions=3)
    register_dataframe("clicks", frame)
    metadata = asyncio.run(SparkSystemAdmin("spark", job_config(tmp_path)).get_metadata(["clicks"]))
    assert metadata["clicks"] == {p: SSPMetadata("0", "9", "10") for p in range(3)}
    log = run(job_config(tmp_path))
    for partition in range(3):
        rows = [seen for seen in log if seen.partition == partition]
        assert [seen.offset for seen in rows] == [str(i) for i in range(10)]
        assert [seen.message for seen in rows] == [{"id": 10 * partition + i} for i in range(10)]
        assert {seen.key for seen in rows} == {None}


def write_files(directory: Path, files: int = 2, rows: int = 50, group: int = 7) -> None:
    """``files`` parquet files of ``rows`` rows each, in row groups of ``group`` rows."""
    directory.mkdir(parents=True)
    for f in range(files):
        table = pa.table({"n": [f * rows + i for i in range(rows)], "ts": list(range(rows))})
        pq.write_table(table, directory / f"part{f}.parquet", row_group_size=group)


def test_configured_parquet_is_read_in_place_one_partition_per_file(tmp_path: Path) -> None:
    write_files(tmp_path / "in")
    config = job_config(
        tmp_path / "state",
        **{"systems.spark.streams.clicks.spark.path": str(tmp_path / "in"),
           "systems.spark.streams.clicks.spark.value": "n",
           "systems.spark.streams.clicks.spark.timestamp": "ts"},
    )  # fmt: skip
    log = run(config)
    assert [(s.partition, s.offset, s.message, s.timestamp) for s in log if s.partition == 1] == [
        (1, str(i), 50 + i, i) for i in range(50)
    ]
    assert len(log) == 100


def test_a_consumer_started_at_row_k_reads_from_row_k(tmp_path: Path) -> None:
    write_files(tmp_path / "in", files=3, rows=20, group=6)
    config = job_config(
        tmp_path / "state",
        **{"systems.spark.streams.clicks.spark.path": f"{tmp_path}/in/*.parquet",
           "systems.spark.streams.clicks.spark.value": "n"},
    )  # fmt: skip

    async def read_from(partition: int, offset: str) -> list[tuple[str, Any]]:
        await SparkSystemAdmin("spark", config).get_metadata(["clicks"])
        consumer = SparkSystemConsumer("spark", config)
        ssp = SystemStreamPartition("spark", "clicks", partition)
        consumer.register(ssp, offset)
        await consumer.start()
        got: list[tuple[str, Any]] = []
        while not got or not got[-1][0].startswith("END"):
            for envelope in (await consumer.poll([ssp], 0)).get(ssp, []):
                got.append(("END" if envelope.is_end_of_stream else envelope.offset, envelope.message))
        await consumer.stop()
        return got

    for offset in (0, 5, 6, 13, 19):
        got = asyncio.run(read_from(2, str(offset)))
        assert got[:-1] == [(str(i), 40 + i) for i in range(offset, 20)]
    assert asyncio.run(read_from(0, "20")) == [("END", None)]


def test_a_configured_key_serde_chooses_the_key_bytes(spark: Any, tmp_path: Path) -> None:
    from samza_nb.serde import serde_for

    frame = spark.createDataFrame([(f"k{i}", i) for i in range(16)], "k string, v long")
    register_dataframe("clicks", frame, key="k", value="v", partitions=3)
    log = run(job_config(tmp_path, **{"systems.spark.samza.key.serde": "json"}))
    json_serde = serde_for("json", "test")
    assert len(log) == 16
    for seen in log:
        assert seen.partition == key_partition(json_serde.to_bytes(seen.key), 3)


def test_an_empty_dataframe_ends_at_once_in_every_partition(spark: Any, tmp_path: Path) -> None:
    register_dataframe("clicks", spark.createDataFrame([], "k string, v long"), key="k", partitions=3)
    metadata = asyncio.run(SparkSystemAdmin("spark", job_config(tmp_path)).get_metadata(["clicks"]))
    assert metadata["clicks"] == {p: SSPMetadata(None, None, "0") for p in range(3)}
    assert run(job_config(tmp_path)) == []


def test_partitioning_on_a_session_whose_workers_run_another_python_fails_in_one_line(
    spark: Any, tmp_path: Path
) -> None:
    """A notebook's session made without PYSPARK_PYTHON starts workers with the PATH's python3, which may not
    have samza_nb: the workers' Python is Spark's to choose (it is not changed behind the user's back), and
    the partition function's failure there is one line naming the fix, not a JVM trace."""
    other = "/usr/bin/python3.11"
    if not Path(other).exists():
        other = "python3"
    context = spark.sparkContext
    before = context.pythonExec
    context.pythonExec = other
    # Workers start in this repository (the JVM's working directory), where any Python finds samza_nb:
    # PYTHONSAFEPATH keeps the working directory off their sys.path, as in a notebook started elsewhere.
    context.environment["PYTHONSAFEPATH"] = "1"
    try:
        register_dataframe("clicks", clicks(spark), key="user", timestamp="ts", partitions=2)
        admin = SparkSystemAdmin("spark", job_config(tmp_path))
        with pytest.raises(ConfigError) as raised:
            asyncio.run(admin.get_metadata(["clicks"]))
        message = str(raised.value)
        assert "\n" not in message and message.startswith(WORKER_PYTHON_MISSING), message
        assert context.pythonExec == other, "the session's worker Python is left as it was"
    finally:
        context.pythonExec = before
        context.environment.pop("PYTHONSAFEPATH", None)
