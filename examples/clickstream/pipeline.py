"""The clickstream pipeline end to end (``make run-spark``): Spark plans the input, samza_nb sessionises it
on Spark, Spark SQL summarises the sessions.

1. ``plan_clicks``: the clicks (parquet) without bots, joined with the users table for each click's country
   — a filter and a join in Spark SQL.
2. ``register_dataframe("clicks", ..., key="user_id", timestamp="ts", partitions=4)``: written once,
   partitioned by user (as a Kafka producer would place the keys) and sorted by time in each partition.
3. ``SparkJobRunner``: the job coordinator on the driver, ``job.container.count`` containers as the tasks of
   one Spark job; each runs :class:`~examples.clickstream.sessionize.SessionizeTask`.
4. ``read_output`` + Spark SQL: sessions per country, their length and clicks.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from examples.clickstream.data import write_inputs
from examples.clickstream.sessionize import DEFAULT_GAP_MS
from samza_nb.config import load_config
from samza_nb.errors import SamzaError
from samza_nb.runtime.console import PROGRESS_INTERVAL_S, progress_bar
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.spark import read_output, register_dataframe
from samza_nb.systems.spark.session import jvm_log_path, spark_session

HERE = Path(__file__).parent
SUMMARY_SQL = """
SELECT country,
       count(*)                                        AS sessions,
       round(avg(clicks), 2)                           AS avg_clicks,
       round(avg((end_ms - start_ms) / 60000.0), 1)    AS avg_minutes
FROM sessions
GROUP BY country
ORDER BY sessions DESC, country
"""


def plan_clicks(spark: Any, data: Path) -> Any:
    """Human clicks with their user's country (Spark SQL: a filter and a join)."""
    spark.read.parquet(str(data / "clicks")).createOrReplaceTempView("raw_clicks")
    spark.read.parquet(str(data / "users.parquet")).createOrReplaceTempView("users")
    return spark.sql(
        "SELECT c.user_id, c.page, c.ts, u.country "
        "FROM raw_clicks c JOIN users u ON c.user_id = u.user_id "
        "WHERE NOT c.is_bot"
    )


def run_pipeline(
    config: Any, spark: Any, data: Path, timeout: float | None = None, *, progress: bool = False
) -> Any:
    """Register the planned clicks, run the job on Spark to its end (a progress bar of every container's
    messages on stderr with ``progress``), and return the summary DataFrame."""
    register_dataframe("clicks", plan_clicks(spark, data), key="user_id", timestamp="ts", partitions=4)
    runner = SparkJobRunner(config, spark)
    bar = progress_bar(config.job_name(), enabled=progress)
    if bar is not None:
        runner.start()
        while not runner.join(PROGRESS_INTERVAL_S):
            bar.update(runner.processed - bar.n)
        bar.update(runner.processed - bar.n)
        bar.close()
    runner.run(timeout=timeout)  # to its end; raises what failed it
    read_output(spark, "sessions", config).createOrReplaceTempView("sessions")
    return spark.sql(SUMMARY_SQL)


def main(argv: list[str] | None = None) -> None:
    """``python -m examples.clickstream.pipeline [--config-path F] [--data DIR] [--verbose]``."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config-path", default=str(HERE / "job.properties"))
    parser.add_argument("--data", default=".samza_nb/clickstream-data", help="where the inputs are generated")
    parser.add_argument("--verbose", action="store_true", help="Spark's log on the terminal (else a file)")
    args = parser.parse_args(argv)
    config = load_config(args.config_path)
    data = write_inputs(args.data)
    jvm_log = None if args.verbose else jvm_log_path(config)
    if jvm_log is not None:
        print(f"clickstream: starting Spark (its log: {jvm_log})", file=sys.stderr, flush=True)
    spark = spark_session(config, config.get_int("job.container.count", 1), jvm_log=jvm_log)
    spark.sparkContext.setLogLevel("WARN" if args.verbose else "ERROR")
    try:
        summary = run_pipeline(config, spark, data, progress=sys.stderr.isatty()).collect()
    except SamzaError as exc:
        sys.exit(f"clickstream: {exc}")
    print(caption(config, spark, summary))
    print(table(summary))


def caption(config: Any, spark: Any, rows: list[Any]) -> str:
    """What the summary table shows and where it came from, in one line."""
    sessions = sum(int(row["sessions"]) for row in rows)
    containers = config.get_int("job.container.count", 1)
    gap = config.get_int("sessionize.gap.ms", DEFAULT_GAP_MS) / 60_000
    return (
        f"Sessions per country: {sessions:,} sessions (a gap of over {gap:g} minutes ends one), sessionised "
        f"by {containers} containers on Spark {spark.sparkContext.master}"
    )


def table(rows: list[Any]) -> str:
    """The summary rows as an aligned text table."""
    header = ("country", "sessions", "avg clicks", "avg minutes")
    cells = [header] + [(str(r["country"]), f"{r['sessions']:,}", f"{r['avg_clicks']}", f"{r['avg_minutes']}")
                        for r in rows]  # fmt: skip
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    lines = [
        "  ".join([row[0].ljust(widths[0]), *(c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True))])
        for row in cells
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
