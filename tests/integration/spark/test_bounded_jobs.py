"""Jobs over bounded Spark inputs: stop and restart, resume, a changed DataFrame, bootstrap, no Spark."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
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

ROOT = Path(__file__).resolve().parents[3]


def run(config: Any, log: list[Seen], **kwargs: Any) -> LocalJobRunner:
    runner = LocalJobRunner(config, recorder(log), **kwargs)
    runner.run(timeout=60)
    return runner


def test_a_stopped_job_resumes_after_its_checkpoint_and_reads_every_row_once(
    spark: Any, tmp_path: Path
) -> None:
    register_dataframe("clicks", spark.range(0, 300, numPartitions=2), value="id")
    config = job_config(tmp_path)
    first: list[Seen] = []
    runner = run(config, first, max_messages=100)
    assert 100 <= len(first) < 300
    import asyncio

    checkpoints = asyncio.run(runner.read_checkpoints())
    last = {ssp.partition: int(offset) for offsets in checkpoints.values() for ssp, offset in offsets.items()}
    second: list[Seen] = []
    run(config, second)
    for partition, offset in last.items():  # a checkpoint at row k: the restart starts at k + 1
        starts = [int(seen.offset) for seen in second if seen.partition == partition]
        assert not starts or starts[0] == offset + 1
    assert sorted(seen.message for seen in first + second) == list(range(300))


def test_a_changed_dataframe_under_a_checkpoint_is_refused_and_reset_offset_lets_it_through(
    spark: Any, tmp_path: Path
) -> None:
    register_dataframe("clicks", spark.range(0, 20, numPartitions=2), value="id")
    run(job_config(tmp_path), [])
    register_dataframe("clicks", spark.range(0, 25, numPartitions=2), value="id")
    with pytest.raises(SamzaError, match=r"stream 'clicks' changed.*reset\.offset") as failure:
        run(job_config(tmp_path), [])
    assert "\n" not in str(failure.value)
    log: list[Seen] = []
    run(job_config(tmp_path, **{"systems.spark.streams.clicks.samza.reset.offset": "true"}), log)
    assert sorted(seen.message for seen in log) == list(range(25))


def test_a_dataframe_that_changed_before_any_read_is_rewritten(spark: Any, tmp_path: Path) -> None:
    from samza_nb.systems.spark.inputs.materialize import prepare_input

    config = job_config(tmp_path)
    register_dataframe("clicks", spark.range(0, 4, numPartitions=1), value="id")
    assert prepare_input(config, "spark", "clicks").partitions[0].rows == 4
    register_dataframe("clicks", spark.range(0, 6, numPartitions=1), value="id")
    log: list[Seen] = []
    run(config, log)
    assert [seen.message for seen in log] == list(range(6))


class Joiner:
    """Keeps users in a store; reports each click with the name the store had for its user."""

    def __init__(self, log: list[tuple[str, Any, Any]]) -> None:
        self.log = log

    def init(self, context: Any) -> None:
        self.users = context.get_store("users")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.ssp.stream == "users":
            self.users.put(envelope.key, envelope.message)
            self.log.append(("users", envelope.key, envelope.message))
        else:
            self.log.append(("clicks", envelope.key, self.users.get(envelope.key)))


def test_a_bootstrap_spark_stream_fills_a_store_before_another_stream_is_read(
    spark: Any, tmp_path: Path
) -> None:
    users = spark.createDataFrame([(f"u{i}", f"name{i}") for i in range(12)], "user string, name string")
    clicks = spark.createDataFrame([(f"u{i % 12}", i) for i in range(60)], "user string, n long")
    register_dataframe("users", users, key="user", value="name", partitions=2)
    register_dataframe("clicks", clicks, key="user", value="n", partitions=2)
    config = job_config(
        tmp_path,
        "spark.users,spark.clicks",
        **{
            "systems.spark.streams.users.samza.bootstrap": "true",
            "stores.users.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.users.key.serde": "string",
            "stores.users.msg.serde": "string",
        },
    )
    log: list[tuple[str, Any, Any]] = []
    LocalJobRunner(config, lambda: Joiner(log)).run(timeout=60)
    assert [kind for kind, *_ in log] == ["users"] * 12 + ["clicks"] * 60
    assert all(name == f"name{user[1:]}" for kind, user, name in log if kind == "clicks")


SCRIPT = """
import sys
from samza_nb import Config
from samza_nb.runtime import LocalJobRunner

seen = []

class Count:
    def process(self, envelope, collector, coordinator):
        seen.append(envelope.message)

config = Config({
    "job.name": "no-spark",
    "task.inputs": "spark.clicks",
    "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
    "systems.spark.samza.offset.default": "oldest",
    "systems.spark.streams.clicks.spark.path": sys.argv[1],
    "systems.spark.streams.clicks.spark.value": "n",
    "job.logged.store.base.dir": sys.argv[2],
})
LocalJobRunner(config, Count).run(timeout=60)
assert "pyspark" not in sys.modules, "pyspark was imported"
print(len(seen), sum(seen))
"""


def test_configured_parquet_without_partitions_needs_no_spark(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    for f in range(3):
        pq.write_table(pa.table({"n": list(range(f * 10, f * 10 + 10))}), tmp_path / "in" / f"{f}.parquet")
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(SCRIPT))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "in"), str(tmp_path / "state")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["30", str(sum(range(30)))]
