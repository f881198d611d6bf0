"""The Spark examples end to end: examples/clickstream (Spark plans, the Spark runner sessionises, Spark SQL
summarises) and examples/enrich (a table from Spark bootstrapped into a store before a live Kafka stream)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from examples.clickstream.data import write_inputs
from examples.clickstream.pipeline import HERE as CLICKSTREAM
from examples.clickstream.pipeline import plan_clicks, run_pipeline
from examples.clickstream.sessionize import DEFAULT_GAP_MS
from examples.enrich.users import COUNTRIES, write_users
from samza_nb.config import load_config
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.spark import read_output, unregister_dataframe
from tests.eventually import eventually
from tests.requirements import require


def expected_sessions(rows: list[dict[str, Any]], gap_ms: int) -> Counter[str]:
    """Sessions per country, computed in plain Python from the planned clicks."""
    by_user: dict[str, list[tuple[int, str]]] = {}
    for row in rows:
        by_user.setdefault(row["user_id"], []).append((int(row["ts"].timestamp() * 1000), row["country"]))
    result: Counter[str] = Counter()
    for times in by_user.values():
        times.sort()
        previous = None
        for at, country in times:
            if previous is None or at - previous > gap_ms:
                result[country] += 1
            previous = at
    return result


def test_clickstream_pipeline_sessions_match_a_plain_python_count(spark: Any, tmp_path: Path) -> None:
    data = write_inputs(tmp_path / "data", users=60, clicks=3000)
    config = load_config(
        {
            **load_config(CLICKSTREAM / "job.properties"),
            "job.logged.store.base.dir": str(tmp_path / "state"),
        }
    )
    try:
        summary = run_pipeline(config, spark, data, timeout=180)
        by_country = {row["country"]: row["sessions"] for row in summary.collect()}
        planned = [row.asDict() for row in plan_clicks(spark, data).collect()]
        assert by_country == dict(expected_sessions(planned, DEFAULT_GAP_MS))
        sessions = read_output(spark, "sessions", config)
        assert sessions.agg({"clicks": "sum"}).collect()[0][0] == len(planned)  # every click in one session
    finally:
        unregister_dataframe("clicks")


def test_enrich_bootstraps_the_spark_table_before_the_kafka_stream(spark: Any, tmp_path: Path) -> None:
    require("aiokafka", "the kafka extra runs the Kafka half of this example")
    from tests.integration.kafka.helpers import create_topic, produce, read_topic

    broker = DevBroker()
    try:
        broker.start()
        bootstrap = broker.bootstrap_servers
        users = write_users(tmp_path / "users.parquet", users=30)
        asyncio.run(create_topic(bootstrap, "clicks", partitions=2))
        asyncio.run(create_topic(bootstrap, "enriched-clicks", partitions=2))
        clicks = [(f"u{n % 30:03d}", f"/page/{n}") for n in range(120)]
        asyncio.run(
            produce(
                bootstrap,
                "clicks",
                [json.dumps({"user_id": u, "page": p}).encode() for u, p in clicks],
                partition=None,
                keys=[u.encode() for u, _ in clicks],
            )
        )
        config = load_config(
            {
                **load_config(Path("examples/enrich/job.properties")),
                "systems.kafka.bootstrap.servers": bootstrap,
                "systems.spark.streams.users.spark.path": str(users),
                "job.logged.store.base.dir": str(tmp_path / "state"),
            }
        )
        runner = LocalJobRunner(config)

        async def run() -> None:
            job = asyncio.ensure_future(runner.run_async(timeout=120))
            await asyncio.to_thread(eventually, lambda: runner.processed >= 30 + len(clicks), timeout=120)
            runner.stop()
            await job

        asyncio.run(run())
        out = asyncio.run(read_topic(bootstrap, "enriched-clicks", 2))
        got = [json.loads(value) for records in out.values() for _, value in records]
        assert sorted((g["user_id"], g["page"]) for g in got) == sorted(clicks)
        countries = {f"u{n:03d}": COUNTRIES[n % 6] for n in range(30)}
        assert all(g["country"] == countries[g["user_id"]] for g in got)  # the table was in the store first
        assert pq.read_table(users).num_rows == 30
    finally:
        broker.stop()


pytestmark = pytest.mark.timeout(300)
