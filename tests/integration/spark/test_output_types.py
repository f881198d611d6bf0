"""Spark outputs keep each column's declared or first-seen type across files; a value that does not fit is a
bad message that fails the job once, naming stream, task, column and value; the envelope key's column."""

from __future__ import annotations

import asyncio
import datetime as dt
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from samza_nb import Config, ConfigError, OutgoingMessageEnvelope, SamzaError, SystemStream
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.errors import BadMessageError
from samza_nb.runtime import LocalJobRunner
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.spark import read_output, register_dataframe
from samza_nb.systems.spark.outputs.commits import committed_files, start_new_generations
from samza_nb.systems.spark.outputs.sink import SparkSinkProducer
from samza_nb.systems.spark.settings import job_key, output_root
from tests.integration.spark.bounded_support import job_config, no_registrations
from tests.integration.spark.test_sink import JOB, commit, recover

__all__ = ["no_registrations"]

OUT = SystemStream("spark", "out")
SCHEMA = "systems.spark.streams.out.spark.schema"
UTC = dt.UTC


_LAST_CHECKPOINTS: dict[tuple[str, str], Checkpoint] = {}
"""(job directory, task) -> the task's last committed checkpoint, for a later producer to resume from."""


def write_commits(config: Config, commits: list[tuple[str, list[Any]]], keys: bool = False) -> None:
    """A new producer sends each commit's messages for its task (keyed ``k<i>`` when ``keys``), flushing.
    A task that committed before resumes from its last checkpoint (a task starting from nothing would begin
    a new output generation)."""
    producer = SparkSinkProducer("spark", config)
    job = str(config.get_str("job.logged.store.base.dir"))

    async def scenario() -> None:
        await producer.start()
        for task in sorted({task for task, _ in commits}):
            await recover(producer, task, resumed=_LAST_CHECKPOINTS.get((job, task)))
        for number, (task, messages) in enumerate(commits):
            for i, message in enumerate(messages):
                producer.send(task, OutgoingMessageEnvelope(OUT, message, key=f"k{i}" if keys else None))
            checkpoint = Checkpoint(changelog_offsets={"s": f"{uuid.uuid4().hex}-{number}"})
            await commit(producer, task, checkpoint)
            _LAST_CHECKPOINTS[(job, task)] = checkpoint
        await producer.stop()

    asyncio.run(scenario())


def schemas(tmp_path: Path) -> list[Any]:
    """The schema of each file of ``out``, in name order."""
    return [
        pq.read_schema(f)
        for f in sorted((tmp_path / JOB / "spark-output" / "out" / JOB / "g000001").glob("*.parquet"))
    ]


def test_a_declared_map_column_round_trips_and_an_undeclared_dict_is_a_struct(
    spark: Any, tmp_path: Path
) -> None:
    config = job_config(tmp_path, **{SCHEMA: "user string, counts map<string, bigint>"})
    write_commits(
        config,
        [
            ("Partition 0", [{"user": "a", "counts": {"x": 1}, "meta": {"n": 1}}]),
            ("Partition 1", [{"user": "b", "counts": {"y": 2, "z": 3}, "meta": {"n": 2, "m": "hi"}}]),
        ],
    )
    frame = read_output(spark, "out", config)
    types = dict(frame.dtypes)
    assert types["counts"] == "map<string,bigint>"
    assert types["meta"] == "struct<n:bigint,m:string>"  # a struct gains the fields seen later
    rows = {r["user"]: (r["counts"], r["meta"].asDict()) for r in frame.collect()}
    assert rows == {"a": ({"x": 1}, {"n": 1, "m": None}), "b": ({"y": 2, "z": 3}, {"n": 2, "m": "hi"})}


def test_declared_decimal_and_timestamp_types_stay_across_commits(spark: Any, tmp_path: Path) -> None:
    config = job_config(tmp_path, **{SCHEMA: "user_id string, total decimal(10,2), at timestamp"})
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    write_commits(config, [("Partition 0", [{"user_id": "a", "total": Decimal("1.5"), "at": aware}])])
    naive = dt.datetime(2024, 1, 1, 10)  # a naive datetime in a timestamp column: UTC
    write_commits(config, [("Partition 0", [{"user_id": "b", "total": Decimal("12345678.99"), "at": naive}])])
    write_commits(config, [("Partition 1", [{"user_id": "c"}])])  # declared columns: in every file
    found = schemas(tmp_path)
    assert len(found) == 3 and all(s == found[0] for s in found)
    assert found[0].field("total").type == pa.decimal128(10, 2)
    frame = read_output(spark, "out", config)
    assert frame.dtypes == [("user_id", "string"), ("total", "decimal(10,2)"), ("at", "timestamp")]
    rows = {r["user_id"]: (r["total"], r["at"]) for r in frame.collect()}
    utc = dt.datetime(2024, 1, 1, 10)  # the session's time zone is UTC
    assert rows == {"a": (Decimal("1.50"), utc), "b": (Decimal("12345678.99"), utc), "c": (None, None)}


def test_first_seen_decimal_and_timestamp_types_stay_across_commits_and_restarts(
    spark: Any, tmp_path: Path
) -> None:
    config = job_config(tmp_path)
    at = dt.datetime(2024, 1, 1, 10, tzinfo=UTC)
    write_commits(
        config,
        [
            ("Partition 0", [{"total": Decimal("1.5"), "at": at, "wall": dt.datetime(2024, 1, 1)}]),
            ("Partition 1", [{"total": Decimal("1234.567"), "at": at.replace(tzinfo=None), "wall": at}]),
        ],
    )
    # a restarted producer takes the types from the files' footers
    write_commits(config, [("Partition 0", [{"total": Decimal("7"), "at": at, "wall": at}])])
    found = schemas(tmp_path)
    assert len(found) == 3 and all(s == found[0] for s in found)
    frame = read_output(spark, "out", config)
    assert dict(frame.dtypes) == {"total": "decimal(38,18)", "at": "timestamp", "wall": "timestamp_ntz"}
    assert sorted(r["total"] for r in frame.collect()) == [Decimal("1.5"), Decimal("7"), Decimal("1234.567")]


def test_a_value_that_does_not_fit_names_stream_task_column_and_value(tmp_path: Path) -> None:
    config = job_config(tmp_path, **{SCHEMA: "total decimal(10,2)"})
    with pytest.raises(BadMessageError) as raised:
        write_commits(config, [("Partition 2", [{"total": Decimal("1")}, {"total": Decimal("1234.567")}])])
    assert str(raised.value).startswith(
        "spark.out output of task 'Partition 2': column 'total': value Decimal('1234.567') does not fit "
        "decimal(10,2)"
    )
    write_commits(job_config(tmp_path / "first"), [("Partition 0", [{"n": 1}])])
    for value, kind in ((1.5, "bigint"), ("x", "bigint")):
        with pytest.raises(BadMessageError, match=rf"column 'n': value {value!r} does not fit {kind}"):
            write_commits(job_config(tmp_path / "first"), [("Partition 0", [{"n": value}])])


def test_a_schema_that_does_not_parse_is_a_config_error_naming_its_key(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"systems\.spark\.streams\.out\.spark\.schema: unknown type 'nope'"
    ):
        SparkSinkProducer("spark", job_config(tmp_path, **{SCHEMA: "a string, b nope"}))


def test_the_key_column_only_for_messages_that_are_not_dicts_or_when_declared(tmp_path: Path) -> None:
    write_commits(job_config(tmp_path / "dicts"), [("Partition 0", [{"user": "u"}])], keys=True)
    write_commits(job_config(tmp_path / "values"), [("Partition 0", ["v"])], keys=True)
    declared = job_config(tmp_path / "declared", **{SCHEMA: "key string"})
    write_commits(declared, [("Partition 0", [{"user": "u"}])], keys=True)
    assert [s.names for s in schemas(tmp_path / "dicts")] == [["user"]]
    assert [s.names for s in schemas(tmp_path / "values")] == [["key", "value"]]
    assert pq.read_table(
        next((tmp_path / "declared" / JOB / "spark-output" / "out" / JOB / "g000001").glob("*.parquet"))
    ).to_pylist() == [{"key": "k0", "user": "u"}]
    with pytest.raises(BadMessageError, match="cannot have a field 'key'"):
        write_commits(declared, [("Partition 0", [{"key": "mine"}])], keys=True)


class SendTotals:
    """Sends each click's ``n`` as a decimal total to ``out`` and counts what it processed in ``seen``."""

    seen: list[int] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        n = envelope.message["n"]
        SendTotals.seen.append(n)
        total = Decimal("1234.567") if n == 7 else Decimal(n)
        collector.send(OutgoingMessageEnvelope(OUT, {"n": n, "total": total}))


def test_a_local_job_fails_once_on_a_value_that_does_not_fit(spark: Any, tmp_path: Path) -> None:
    clicks = spark.createDataFrame([(f"u{i}", i) for i in range(10)], "user string, n long")
    register_dataframe("clicks", clicks, key="user", partitions=1)
    SendTotals.seen = []
    config = job_config(tmp_path, **{"task.commit.ms": "-1", SCHEMA: "n bigint, total decimal(10,2)"})
    with pytest.raises(SamzaError) as raised:
        LocalJobRunner(config, SendTotals).run(timeout=60)
    line = str(raised.value)
    assert "\n" not in line
    assert "spark.out output of task 'Partition 0': column 'total': value Decimal('1234.567')" in line
    assert sorted(SendTotals.seen) == list(range(10))  # processed once: the failed commit is not retried


def test_the_spark_runner_does_not_retry_a_container_a_bad_message_failed(spark: Any, tmp_path: Path) -> None:
    lines = [f"a{i}" for i in range(20)]
    (tmp_path / "a.txt").write_text("".join(f"{line}\n" for line in lines))
    config = Config(
        {
            "job.name": f"spark-bad-{uuid.uuid4().hex[:6]}",
            "task.class": "tests.integration.spark.runner_tasks.ToSpark",
            "task.inputs": "file.a",
            "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
            "systems.file.streams.a.path": str(tmp_path / "a.txt"),
            "systems.file.samza.offset.default": "oldest",
            "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
            SCHEMA: "line string, total decimal(10,2)",
            "job.container.count": "1",
            "job.logged.store.base.dir": str(tmp_path / "state"),
            "task.commit.ms": "100",
            "cluster-manager.container.status.interval.ms": "50",
            "test.record": str(tmp_path / "record.txt"),
            "test.fail.on": "a7",
        }
    )
    runner = SparkJobRunner(config, spark)
    with pytest.raises(SamzaError) as raised:
        runner.run(timeout=120)
    line = str(raised.value)
    assert line.startswith("container 0 failed: ") and "\n" not in line, line
    assert "spark.out output of task 'Partition 0': column 'total': value Decimal('1234.567')" in line
    pids = {row.split()[1] for row in (tmp_path / "record.txt").read_text().splitlines()}
    assert len(pids) == 1, "one attempt: Spark did not retry the container"


def test_a_changed_declared_type_under_resumed_output_is_refused_naming_the_column(tmp_path: Path) -> None:
    write_commits(
        job_config(tmp_path, **{SCHEMA: "user string, n int"}), [("Partition 0", [{"user": "a", "n": 1}])]
    )
    changed = job_config(tmp_path, **{SCHEMA: "user string, n bigint"})
    with pytest.raises(ConfigError) as caught:
        write_commits(changed, [("Partition 0", [{"user": "b", "n": 2}])])
    text = str(caught.value)
    assert "\n" not in text and SCHEMA in text and "'n'" in text and "bigint" in text and " int " in text
    assert "new job.id" in text
    assert len(schemas(tmp_path)) == 1  # nothing written under the old files


def test_a_changed_declared_type_after_a_reset_is_taken(tmp_path: Path) -> None:
    write_commits(job_config(tmp_path, **{SCHEMA: "n int"}), [("Partition 0", [{"n": 1}])])
    changed = job_config(tmp_path, **{SCHEMA: "n bigint"})
    start_new_generations(output_root(changed, "spark"), job_key(changed))  # what samza-nb reset does
    write_commits(changed, [("Partition 0", [{"n": 2}])])
    assert [row["n"] for row in read_committed(changed)] == [2]


def read_committed(config: Config) -> list[dict[str, Any]]:
    """The committed rows of ``out`` (read with pyarrow)."""
    files = committed_files(output_root(config, "spark"), job_key(config), "out")
    return [row for path in files for row in pq.read_table(path).to_pylist()]
