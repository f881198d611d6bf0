"""End-to-end latency of a streaming DataFrame read by a job (issue 14, benchmark (d)).

A ``rate-micro-batch`` stream (``--rows`` rows per batch) with ``current_timestamp()`` as its timestamp
column — in Structured Streaming that is the micro-batch's start — is registered on the Spark system and
read by a job run in this process (LocalJobRunner: it plans its own model, so it feeds the stream); the
task records, per message, ``now - envelope.timestamp``: from the batch's timestamp to processing, through
``foreachBatch`` (Arrow, pickle, append, fsync) and the durable log to the container. The first
``--warmup`` batches are left out (query start). Prints the median and p99 in ms, and the feed's share:
the batch's timestamp to the end of its flush (from the feed's ``timings``).

Run: ``python benchmarks/spark_stream_latency.py [--rows 100] [--batches 60] [--partitions 2]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import OutputMismatch, same
from samza_nb.api.streams import IncomingMessageEnvelope
from samza_nb.config import Config
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.inputs.feed import running_feeds


class LatencyTask:
    """Records (value, processing ms - event ms) per message."""

    seen: list[tuple[int, int]] = []
    event_ms: list[tuple[int, int]] = []

    def process(self, envelope: IncomingMessageEnvelope, collector: Any, coordinator: Any) -> None:
        now = time.time_ns() // 1_000_000
        event = envelope.timestamp if envelope.timestamp is not None else now
        LatencyTask.seen.append((envelope.message["value"], now - event))
        LatencyTask.event_ms.append((envelope.message["value"], event))


def percentile(values: list[int], q: float) -> float:
    """The q-quantile (0..1) of ``values`` by nearest rank."""
    ordered = sorted(values)
    return float(ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))])


def main() -> None:
    """Run the measurement and print it."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--partitions", type=int, default=2)
    args = parser.parse_args()

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    measure(spark, args.rows, args.batches, args.warmup, args.partitions)
    spark.stop()


def measure(spark: Any, rows: int, batches: int, warmup: int, partitions: int) -> None:
    """Run the measurement in ``spark`` and print it; the run checked to have ended cleanly, processed
    ``rows * batches`` messages at least and none twice."""
    from pyspark.sql import functions as F

    LatencyTask.seen, LatencyTask.event_ms = [], []
    df = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows)
        .option("numPartitions", 1)
        .load()
        .select("value", (F.col("value") % 16).cast("string").alias("key"), F.current_timestamp().alias("ts"))
    )
    with tempfile.TemporaryDirectory() as base:
        register_dataframe("rates", df, key="key", timestamp="ts", partitions=partitions)
        config = Config(
            {
                "job.name": "latency",
                "job.logged.store.base.dir": str(Path(base)),
                "task.inputs": "spark.rates",
                "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
            }
        )
        runner = LocalJobRunner(config, LatencyTask)
        failures: list[BaseException] = []

        def run() -> None:
            try:
                runner.run()
            except BaseException as exc:  # reported by the output check below
                failures.append(exc)

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        wanted = rows * batches
        started = time.monotonic()
        while len(LatencyTask.seen) < wanted and thread.is_alive() and time.monotonic() - started < 600:
            time.sleep(0.2)  # a benchmark's progress check, not synchronisation of a test
        timings = [t for feed in running_feeds() for t in feed.timings]
        runner.stop()
        thread.join()
    if failures:
        raise OutputMismatch(f"the job failed: {failures[0]!r}")
    if len(LatencyTask.seen) < wanted:
        raise OutputMismatch(f"the job processed {len(LatencyTask.seen)} of {wanted} messages in 600 s")
    values = [value for value, _ in LatencyTask.seen]
    same("messages processed once each", len(set(values)), len(values))
    skip = rows * warmup
    latencies = [ms for value, ms in LatencyTask.seen if value >= skip]
    # The feed's share: batch timestamp (its first message's event time) -> its rows flushed to the log.
    batch_ts = {value // rows: seen for value, seen in LatencyTask.event_ms}
    feed_share = [
        t.flushed_ms - batch_ts[t.batch_id]
        for t in timings
        if t.batch_id in batch_ts and t.batch_id >= warmup
    ]
    if not latencies:
        raise OutputMismatch("no message processed after the warm-up")
    print(
        f"rate-micro-batch, {rows} rows/batch, {partitions} partitions, "
        f"{len(latencies)} messages after {warmup} warm-up batches: "
        f"batch timestamp -> processed: median {statistics.median(latencies):.0f} ms, "
        f"p99 {percentile(latencies, 0.99):.0f} ms, max {max(latencies)} ms"
    )
    if feed_share:
        print(
            f"  of which batch timestamp -> rows flushed to the log (Spark's batch, toArrow, pickle, fsync): "
            f"median {statistics.median(feed_share):.0f} ms, p99 {percentile(feed_share, 0.99):.0f} ms"
        )


if __name__ == "__main__":
    main()
