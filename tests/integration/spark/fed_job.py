"""A job over a fed Spark stream, for the streaming tests: its task, its config, and a driver to run in a
child process (``python -m tests.integration.spark.fed_job BASE STOP_AT``: its own SparkSession, the
rate-micro-batch stream registered, the job run in this process by LocalJobRunner until a task has
processed value ``STOP_AT``, then stopped gracefully).

The stream: ``rate-micro-batch`` with :data:`ROWS_PER_BATCH` rows per batch (values 0, 1, 2, … in order),
keyed by ``value % 4`` (as str) into :data:`PARTITIONS` partitions. The task copies each message to the
durable log stream ``out.echo``, same partition, with the time it processed it.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from samza_nb.api.streams import IncomingMessageEnvelope, OutgoingMessageEnvelope, SystemStream
from samza_nb.api.task import MessageCollector, RequestScope, TaskCoordinator
from samza_nb.config import Config

ROWS_PER_BATCH = 20
PARTITIONS = 2
OUT = SystemStream("out", "echo")


class EchoTask:
    """Copies each fed message to ``out.echo`` (same partition) as ``(value, event ms, processed ms)``;
    with ``stop_at`` set, shuts the container down once it processed that value or a later one."""

    stop_at: int | None = None

    def process(
        self, envelope: IncomingMessageEnvelope, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        value = envelope.message["value"]
        now = time.time_ns() // 1_000_000
        collector.send(
            OutgoingMessageEnvelope(
                OUT, (value, envelope.timestamp, now), key=envelope.key, partition=envelope.ssp.partition
            )
        )
        if self.stop_at is not None and value >= self.stop_at:
            coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)


def job_config(base: Path, **extra: Any) -> Config:
    """The job: ``spark.rates`` (fed) into ``out.echo`` (durable log, pickled values)."""
    return Config(
        {
            "job.name": "fedjob",
            "job.logged.store.base.dir": str(base),
            "task.inputs": "spark.rates",
            "task.commit.ms": "200",
            "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
            "systems.out.samza.factory": "samza_nb.systems.log.LogSystemFactory",
            "systems.out.samza.msg.serde": "pickle",
            "systems.out.samza.key.serde": "pickle",
            f"systems.out.streams.{OUT.stream}.partitions": str(PARTITIONS),
            **extra,
        }
    )


def rate_stream(spark: Any, rows_per_batch: int = ROWS_PER_BATCH, *, with_batch_time: bool = False) -> Any:
    """rate-micro-batch (one partition, so a batch's rows are in value order) with ``key`` = value % 4 as
    str and ``ts`` = the row's timestamp (with ``with_batch_time``: the batch's start, current_timestamp)."""
    from pyspark.sql import functions as F

    df = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .option("numPartitions", 1)
        .load()
    )
    ts = F.current_timestamp() if with_batch_time else F.col("timestamp")
    return df.select("value", (F.col("value") % 4).cast("string").alias("key"), ts.alias("ts"))


def read_echo(base: Path) -> dict[int, list[tuple[int, int, int]]]:
    """What the job wrote to ``out.echo``, per partition in offset order (``[]`` before it exists)."""
    import pickle

    from samza_nb.systems.log import DurableLog

    directory = base / "log"
    if not (directory / OUT.stream / "stream.json").is_file():
        return {p: [] for p in range(PARTITIONS)}
    with DurableLog(directory) as log:
        return {
            p: [pickle.loads(value) for _, _, value in log.read(OUT.stream, p)] for p in range(PARTITIONS)
        }


@contextlib.contextmanager
def running_in_background(runner: Any, timeout: float) -> Iterator[list[BaseException]]:
    """``runner.run(timeout)`` on a thread for the block; stopped and joined after it. Yields the list
    that receives what the run raised (empty when it ended well)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            runner.run(timeout=timeout)
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield errors
    finally:
        runner.stop()
        thread.join()


def main(base: str, stop_at: str) -> None:
    """The driver in a child process: a SparkSession, the registration, the job until ``stop_at``."""
    from pyspark.sql import SparkSession

    from samza_nb.runtime.local import LocalJobRunner
    from samza_nb.systems.spark import register_dataframe

    spark = (
        SparkSession.builder.master("local[1]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    register_dataframe("rates", rate_stream(spark), key="key", timestamp="ts", partitions=PARTITIONS)
    EchoTask.stop_at = int(stop_at)
    LocalJobRunner(job_config(Path(base)), EchoTask).run()
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:3])
