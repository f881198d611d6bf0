"""Issue 14 benchmark (a): a bounded DataFrame into a pass-through task in one container, as a ratio to
``for row in df.toArrow().to_pylist(): pass`` measured right before it in the same run.

The DataFrame: ``--rows`` rows (default 1M) of ``id`` (long), ``user`` (string) and ``ts`` (timestamp) in
one Spark partition, cached. Two workloads: the row as a dict with key ``user`` and timestamp ``ts`` (the
costliest messages: every column converted, timestamps to ``datetime``), and the ``id`` column as the
value. The container's figure is the run of ``LocalJobRunner`` (planning, reading the written parquet with
pyarrow, every message through the task, the final commit); writing the input once (Spark, on the driver)
is printed beside it and is not part of the ratio (it happens once per DataFrame, not per run).

Run: ``python benchmarks/spark_bounded.py [--rows N] [--runs R]``; prints each run and the median ratio.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb import Config
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.inputs.materialize import prepare_input


class Pass:
    """Does nothing with each message but keep the last one (the output check compares it with the
    DataFrame's last row)."""

    last: Any = None

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Pass.last = envelope


def baseline(df: Any) -> float:
    start = time.perf_counter()
    for _row in df.toArrow().to_pylist():
        pass
    return time.perf_counter() - start


def container(df: Any, rows: int, key: str | None, value: str | None, ts: str | None) -> tuple[float, float]:
    """(seconds writing the input once, seconds of the container's run)."""
    register_dataframe("rows", df, key=key, value=value, timestamp=ts)
    config = Config(
        {
            "job.name": "bench-spark-bounded",
            "task.inputs": "spark.rows",
            "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
            "systems.spark.samza.offset.default": "oldest",
            "job.logged.store.base.dir": tempfile.mkdtemp(prefix="bench-spark-"),
        }
    )
    start = time.perf_counter()
    prepare_input(config, "spark", "rows")
    written = time.perf_counter() - start
    runner = LocalJobRunner(config, Pass)
    Pass.last = None
    start = time.perf_counter()
    runner.run(timeout=1200)
    ran = time.perf_counter() - start
    same(f"{key or value}: messages processed", runner.processed, rows)
    same(f"{key or value}: the last message", seen(Pass.last, value), expected_last(rows, value))
    return written, ran


def seen(envelope: Any, value: str | None) -> tuple[Any, ...]:
    """(id, key, timestamp) of the message the task got in ``envelope``: the value column is the id; a row
    dict holds it, with its ``user`` as the key and its ``ts`` as the timestamp."""
    if envelope is None:
        return ()
    if value:
        return (envelope.message,)
    return envelope.message["id"], envelope.key, envelope.timestamp


def expected_last(rows: int, value: str | None) -> tuple[Any, ...]:
    """``seen`` of the DataFrame's last row, from how the DataFrame is built (row ``i``: id ``i``, user
    ``u{i % 1000}``, ts ``i + 1700000000000`` ms)."""
    last = rows - 1
    return (last,) if value else (last, f"u{last % 1000}", last + 1_700_000_000_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    measure(spark, args.rows, args.runs)
    spark.stop()


def measure(spark: Any, rows: int, runs: int) -> None:
    """Both workloads over ``rows`` rows, ``runs`` times each, in ``spark`` (timestamps in UTC)."""
    df = spark.range(rows, numPartitions=1).selectExpr(
        "id", "concat('u', cast(id % 1000 as string)) as user", "timestamp_millis(id + 1700000000000) as ts"
    )
    df = df.cache()
    df.count()
    workloads = {"row dicts (key, timestamp)": ("user", None, "ts"), "value column": (None, "id", None)}
    for label, (key, value, ts) in workloads.items():
        ratios = []
        for _ in range(runs):
            base = baseline(df)
            written, ran = container(df, rows, key, value, ts)
            ratios.append(base / ran)
            print(
                f"  {label}: toArrow().to_pylist() {base:.2f} s, container {ran:.2f} s, "
                f"ratio {base / ran:.2f} (input written once in {written:.2f} s)",
                flush=True,
            )
        print(f"{label}: median ratio {statistics.median(ratios):.2f} (target >= 0.8)", flush=True)
    df.unpersist()


if __name__ == "__main__":
    main()
