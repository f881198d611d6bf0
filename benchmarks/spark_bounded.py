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
import tempfile
import time
from typing import Any

from samza_nb import Config
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.inputs.materialize import prepare_input


class Pass:
    """Does nothing with each message."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


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
    start = time.perf_counter()
    runner.run(timeout=1200)
    ran = time.perf_counter() - start
    assert runner.processed == rows, runner.processed
    return written, ran


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
    df = spark.range(args.rows, numPartitions=1).selectExpr(
        "id", "concat('u', cast(id % 1000 as string)) as user", "timestamp_millis(id + 1700000000000) as ts"
    )
    df = df.cache()
    df.count()
    workloads = {"row dicts (key, timestamp)": ("user", None, "ts"), "value column": (None, "id", None)}
    for label, (key, value, ts) in workloads.items():
        ratios = []
        for _ in range(args.runs):
            base = baseline(df)
            written, ran = container(df, args.rows, key, value, ts)
            ratios.append(base / ran)
            print(
                f"  {label}: toArrow().to_pylist() {base:.2f} s, container {ran:.2f} s, "
                f"ratio {base / ran:.2f} (input written once in {written:.2f} s)",
                flush=True,
            )
        print(f"{label}: median ratio {statistics.median(ratios):.2f} (target >= 0.8)", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
