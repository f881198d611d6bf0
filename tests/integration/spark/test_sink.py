"""Spark outputs: parquet per task per commit, written atomically, read back with read_output."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from samza_nb import OutgoingMessageEnvelope, SamzaError, SystemStream
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.errors import SystemProducerError
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.partitioner import key_partition
from samza_nb.systems.spark import read_output, register_dataframe
from samza_nb.systems.spark.outputs import current_output_directory
from samza_nb.systems.spark.outputs.commits import OutputCommits
from samza_nb.systems.spark.outputs.sink import SparkSinkProducer
from tests.integration.spark.bounded_support import job_config, no_registrations

__all__ = ["no_registrations"]

OUT = SystemStream("spark", "out")
JOB = "spark-bounded-1"
"""The job's files directory under its base directory (job.name spark-bounded, job.id 1)."""


class Enrich:
    """Sends each click to the Spark output ``out``, keyed by user, as a dict."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        row = envelope.message
        collector.send(
            OutgoingMessageEnvelope(OUT, {"user": row["user"], "double": row["n"] * 2}, key=row["user"])
        )


def test_a_jobs_output_round_trips_through_read_output(spark: Any, tmp_path: Path) -> None:
    clicks = spark.createDataFrame([(f"u{i % 5}", i) for i in range(40)], "user string, n long")
    register_dataframe("clicks", clicks, key="user", partitions=2)
    config = job_config(tmp_path, **{"task.commit.ms": "-1"})
    LocalJobRunner(config, Enrich).run(timeout=60)
    frame = read_output(spark, "out", config)
    assert frame.columns == ["user", "double"]  # dict messages carry their key: no column key
    rows = frame.collect()
    assert sorted((r["user"], r["double"]) for r in rows) == sorted((f"u{i % 5}", 2 * i) for i in range(40))
    directory = current_output_directory(config, "spark", "out")
    assert directory == tmp_path / JOB / "spark-output" / "out" / JOB / "g000001"
    files = sorted(p.name for p in directory.glob("*.parquet"))
    plain = spark.read.parquet(str(directory)).collect()  # Spark's own reader: the _spark_metadata log
    assert sorted((r["user"], r["double"]) for r in plain) == sorted((r["user"], r["double"]) for r in rows)
    tasks = sorted({f"Partition_{key_partition(f'u{i}'.encode(), 2)}" for i in range(5)})
    assert [name.split(".")[0] for name in files] == tasks  # one file per task (one commit: at the end)


def test_each_flush_writes_one_file_per_task_in_commit_order(tmp_path: Path) -> None:
    producer = SparkSinkProducer("spark", job_config(tmp_path))

    async def scenario() -> None:
        await producer.start()
        await recover(producer, "Partition 0", "Partition 1")
        for commit in range(3):
            for i in range(4):
                producer.send("Partition 1", OutgoingMessageEnvelope(OUT, f"v{commit}.{i}"))
            producer.send("Partition 0", OutgoingMessageEnvelope(OUT, f"c{commit}", key=b"k"))
            await producer.flush("Partition 1")
            await producer.flush("Partition 0")
        await producer.flush("Partition 0")  # nothing sent since: no file
        await producer.stop()

    asyncio.run(scenario())
    directory = tmp_path / JOB / "spark-output" / "out" / JOB / "g000001"
    files = sorted(directory.glob("*.parquet"))
    assert [f.name.split(".")[0] for f in files] == ["Partition_0"] * 3 + ["Partition_1"] * 3
    values = [pq.read_table(f).to_pylist() for f in files]
    assert values[:3] == [[{"key": b"k", "value": f"c{c}"}] for c in range(3)]
    assert values[3:] == [[{"value": f"v{c}.{i}"} for i in range(4)] for c in range(3)]


def test_a_message_parquet_cannot_store_names_stream_and_task(tmp_path: Path) -> None:
    producer = SparkSinkProducer("spark", job_config(tmp_path))
    asyncio.run(recover(producer, "Partition 3"))
    producer.send("Partition 3", OutgoingMessageEnvelope(OUT, object()))
    with pytest.raises(SystemProducerError, match=r"spark\.out .*'Partition 3'"):
        asyncio.run(producer.flush("Partition 3"))
    assert not list((tmp_path / JOB / "spark-output").rglob("*.parquet"))


def test_read_output_of_a_stream_without_files_names_its_directory(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(SamzaError, match="spark-output/nothing"):
        read_output(spark, "nothing", job_config(tmp_path))


async def recover(producer: SparkSinkProducer, *tasks: str, resumed: Checkpoint | None = None) -> None:
    """What a container does before its tasks process: settle each task's commits (``resumed``: the
    checkpoint the tasks resume from; None: they start from nothing, in a new generation)."""
    for task in tasks:
        await producer.recover(task, resumed, reset=False)


async def commit(producer: SparkSinkProducer, task: str, checkpoint: Checkpoint) -> None:
    """A task's commit as the container makes it: flush, record as pending, write the checkpoint, commit."""
    await producer.flush(task)
    await producer.prepare_commit(task, checkpoint)
    await producer.commit_done(task, checkpoint)


def _write_commits(
    producer: SparkSinkProducer, commits: list[tuple[str, list[Any]]], resumed: Checkpoint | None = None
) -> None:
    async def scenario() -> None:
        await producer.start()
        await recover(producer, *sorted({task for task, _ in commits}), resumed=resumed)
        for number, (task, messages) in enumerate(commits):
            for message in messages:
                producer.send(task, OutgoingMessageEnvelope(OUT, message))
            await commit(producer, task, Checkpoint(changelog_offsets={"s": str(number)}))
        await producer.stop()

    asyncio.run(scenario())


def test_a_field_always_none_in_a_commit_takes_the_known_type_or_is_left_out(
    spark: Any, tmp_path: Path
) -> None:
    config = job_config(tmp_path)
    _write_commits(
        SparkSinkProducer("spark", config),
        [
            ("Partition 0", [{"n": 1, "note": None}]),  # no type known yet for note: left out
            ("Partition 0", [{"n": 2, "note": "hi"}]),
            ("Partition 1", [{"n": 3, "note": None}, {"n": 4, "note": None}]),  # string, as known
        ],
    )
    # a restarted producer knows the types from the files already there
    last = Checkpoint(changelog_offsets={"s": "2"})  # Partition 1's last commit above
    _write_commits(SparkSinkProducer("spark", config), [("Partition 1", [{"n": 5, "note": None}])], last)
    directory = tmp_path / JOB / "spark-output" / "out" / JOB / "g000001"
    schemas = [pq.read_schema(f) for f in sorted(directory.glob("*.parquet"))]
    assert [s.names for s in schemas] == [["n"], ["n", "note"], ["n", "note"], ["n", "note"]]
    assert all(s.field("note").type == "string" for s in schemas[1:])
    rows = read_output(spark, "out", config).collect()
    expected = [(1, None), (2, "hi"), (3, None), (4, None), (5, None)]
    assert sorted((r["n"], r["note"]) for r in rows) == expected


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"n": 1}, {"n": 1.5}),  # bigint in one task's file, double in another's
        ({"n": "1"}, {"n": 2}),
        ({"n": {"x": 1}}, {"n": 2}),  # struct against bigint: left to Spark, its error kept to one line
    ],
)
def test_conflicting_column_types_are_one_line_naming_directory_and_column(
    spark: Any, tmp_path: Path, first: dict[str, Any], second: dict[str, Any]
) -> None:
    config = job_config(tmp_path)
    _write_commits(SparkSinkProducer("spark", config), [("Partition 0", [{"k": "a", **first}])])
    # the producer keeps a column's first type (test_output_types): another writer's file conflicts
    other = pa.Table.from_pylist([{"k": "b", **second}])
    commits = OutputCommits(tmp_path / JOB / "spark-output", JOB)
    commits.recover("Partition 1", None, reset=False)
    name = f"Partition_1.{1:020d}-0000beef.parquet"
    pq.write_table(other, commits.stream_directory("Partition 1", "out") / name)
    commits.written("Partition 1", "out", name)
    commits.prepare("Partition 1", Checkpoint(changelog_offsets={"s": "1"}))
    commits.committed("Partition 1", Checkpoint(changelog_offsets={"s": "1"}))
    with pytest.raises(SamzaError) as raised:
        read_output(spark, "out", config)
    message = str(raised.value)
    assert "\n" not in message
    assert str(tmp_path / JOB / "spark-output" / "out") in message and "'n'" in message
    assert "Py4J" not in message and "at org.apache" not in message
    assert raised.value.__cause__ is None  # no JVM traceback chained to it
    assert raised.value.__context__ is None or raised.value.__suppress_context__
