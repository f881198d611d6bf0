"""Plain Spark reads a Spark output's ``_spark_metadata`` log: ``spark.read.parquet(<directory>)`` lists only
the committed files (not a file an attempt left behind), through compactions and retention; and a long
job's directory stays small: its log is compacted and its small files merged
(``systems.<s>.spark.output.target.file.rows``)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from samza_nb import OutgoingMessageEnvelope, SystemStream
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.systems.spark import read_output
from samza_nb.systems.spark.outputs import committed_paths, current_output_directory, output_generations
from samza_nb.systems.spark.outputs.sink import SparkSinkProducer
from samza_nb.systems.spark.outputs.spark_log import SparkMetadataLog, entry_for
from tests.integration.spark.bounded_support import job_config

OUT = SystemStream("spark", "out")
ROWS = 200_000
COMMITS = 761  # the 200k-row job at the default commit period
TASKS = ("Partition 0", "Partition 1")


def test_plain_spark_reads_only_the_files_in_the_log(spark: Any, tmp_path: Path) -> None:
    log = SparkMetadataLog(tmp_path)
    for n in range(25):  # two compactions (9, 19), retention of the batches before 9
        path = tmp_path / f"part.{n:03d}.parquet"
        pq.write_table(pa.table({"n": [n, n + 1000]}), path)
        log.append([entry_for(path)])
    pq.write_table(pa.table({"n": [-1]}), tmp_path / "part.orphan.parquet")  # never committed
    rows = sorted(row["n"] for row in spark.read.parquet(str(tmp_path)).collect())
    assert rows == sorted([*range(25), *range(1000, 1025)])
    assert sorted(duckdb.read_parquet(committed_paths(tmp_path)).fetchall()) == [(n,) for n in rows]


def _long_job(base: Path, target: int) -> tuple[Any, float]:
    """COMMITS commits of ROWS rows over two tasks through the sink; the config and the seconds taken."""
    config = job_config(base, **{"systems.spark.spark.output.target.file.rows": str(target)})
    producer = SparkSinkProducer("spark", config)
    per_commit = ROWS // COMMITS

    async def scenario() -> None:
        await producer.start()
        for task in TASKS:
            await producer.recover(task, None, reset=False)
        sent = 0
        for number in range(COMMITS):
            task = TASKS[number % 2]
            count = per_commit if number < COMMITS - 1 else ROWS - sent
            for i in range(sent, sent + count):
                producer.send(task, OutgoingMessageEnvelope(OUT, {"n": i}))
            sent += count
            checkpoint = Checkpoint(changelog_offsets={"s": str(number)})
            await producer.flush(task)
            await producer.prepare_commit(task, checkpoint)
            await producer.commit_done(task, checkpoint)
        await producer.stop()

    began = time.perf_counter()
    asyncio.run(scenario())
    return config, time.perf_counter() - began


def test_a_200k_row_job_leaves_a_few_dozen_files_and_records(spark: Any, tmp_path: Path) -> None:
    merged_config, merged_s = _long_job(tmp_path / "merged", target=1_000_000)
    plain_config, plain_s = _long_job(tmp_path / "unmerged", target=0)
    directory = current_output_directory(merged_config, "spark", "out")
    assert [g.directory for g in output_generations(merged_config, "spark", "out")] == [directory]
    everything = [p for p in (tmp_path / "merged").rglob("*") if p.is_file()]
    parquet = [p for p in everything if p.suffix == ".parquet"]
    unmerged = list(current_output_directory(plain_config, "spark", "out").glob("*.parquet"))
    print(
        f"200k rows, {COMMITS} commits: {len(parquet)} parquet files merged vs {len(unmerged)} "
        f"({len(unmerged) / len(parquet):.1f}x fewer); {len(everything)} files in all; "
        f"rows/s merged / unmerged = {plain_s / merged_s:.2f}"
    )
    assert len(unmerged) == COMMITS
    assert len(everything) <= 60, sorted(str(p.relative_to(tmp_path)) for p in everything)
    plain = spark.read.parquet(str(directory))
    assert plain.count() == ROWS and plain.distinct().count() == ROWS
    assert sorted(r["n"] for r in read_output(spark, "out", merged_config).collect()) == list(range(ROWS))
