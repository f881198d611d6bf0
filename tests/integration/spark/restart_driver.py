"""A driver process for the restart tests: ``python -m tests.integration.spark.restart_driver BASE MODE``.

It makes its own local SparkSession, registers 3,000 rows (``id``, ``k``) as the Spark stream ``rows``
(partitioned by ``k`` into 2), and runs job ``restart`` with the Spark runner (two containers), whose task
sends each row to the Spark output ``out``. MODE ``stop-at-N`` stops the job gracefully once N messages are
processed; ``run`` runs it to its end; ``hang-at-N`` prints ``processed N`` and then waits to be killed.
Each line ``processed <n>`` on stdout is the runner's count as it grows.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.spark import register_dataframe
from samza_nb.systems.spark.session import import_pyspark_sql

ROWS = 3000
OUT = SystemStream("spark", "out")


class Forward:
    """Sends each row to ``spark.out`` as ``{"id": ..}``, at most ~500 rows a second per task (so the
    driver sees the job part-way)."""

    def process(self, envelope: object, collector: object, coordinator: object) -> None:
        row = envelope.message  # type: ignore[attr-defined]
        collector.send(OutgoingMessageEnvelope(OUT, {"id": row["id"]}))  # type: ignore[attr-defined]
        time.sleep(0.002)  # pacing, not synchronisation


def job_config(base: str, **extra: str) -> Config:
    """The job's config under ``base``."""
    return Config(
        {
            "job.name": "restart",
            "task.class": "tests.integration.spark.restart_driver.Forward",
            "task.inputs": "spark.rows",
            "task.commit.ms": "200",
            "cluster-manager.container.status.interval.ms": "50",
            "job.container.count": "2",
            "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
            "systems.spark.samza.offset.default": "oldest",
            "job.logged.store.base.dir": base,
            **extra,
        }
    )


def main(base: str, mode: str, *extra: str) -> None:
    """Run the driver (see the module)."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    sql = import_pyspark_sql()
    spark = (
        sql.SparkSession.builder.master("local[2,2]")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    rows = spark.range(ROWS).selectExpr("id", "cast(id % 13 as string) AS k")
    register_dataframe("rows", rows, key="k", partitions=2)
    overrides = dict(item.split("=", 1) for item in extra)
    runner = SparkJobRunner(job_config(base, **overrides), spark)
    limit = int(mode.rsplit("-", 1)[1]) if "-at-" in mode else None
    runner.start()
    assert runner.coordinator is not None
    print(f"url {runner.coordinator.url}", flush=True)
    said = -1
    while not runner.join(0.05):
        if runner.processed != said:
            said = runner.processed
            print(f"processed {said}", flush=True)
        if limit is not None and said >= limit:
            if mode.startswith("stop"):
                runner.stop()
                limit = None
            else:
                threading.Event().wait()  # until it is killed
    runner.run()
    print(f"done {runner.processed}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main(*sys.argv[1:])
