"""A job reading a fed streaming DataFrame: in order with none lost, fed by whoever planned the job model
(a container that plans its own, the job coordinator), and across a kill -9 of the whole driver."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.errors import SamzaError
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.spark import register_dataframe, unregister_dataframe
from samza_nb.systems.spark.datasource import register_samza_log
from samza_nb.systems.spark.inputs.keys import RowPartitioner
from tests.eventually import eventually
from tests.integration.spark.fed_job import (
    PARTITIONS,
    EchoTask,
    job_config,
    rate_stream,
    read_echo,
    running_in_background,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def _unregister() -> Iterator[None]:
    yield
    unregister_dataframe("rates")


def _feeds(spark: Any) -> list[Any]:
    return [q for q in spark.streams.active if q.name and q.name.startswith("samza-feed-fedjob-")]


def check_at_least_once(echo: dict[int, list[tuple[int, int, int]]]) -> tuple[int, int]:
    """Every partition's values are the partition's share of 0, 1, 2, … in order, with no gap; a value
    seen again only as part of a replay (a run of consecutive values starting at or before the highest
    value seen). Returns (distinct values, duplicates)."""
    partition_of = RowPartitioner(PARTITIONS)
    distinct = duplicates = 0
    for partition, rows in echo.items():
        values = [value for value, _, _ in rows]
        if not values:
            continue
        limit = max(values) + 1
        expected = [v for v in range(limit) if partition_of(str(v % 4)) == partition]
        index = {v: i for i, v in enumerate(expected)}
        assert all(v in index for v in values), f"partition {partition} got a value of another partition"
        high, previous = 0, -1  # high: how many of expected were seen; previous: index of the last value
        for value in values:
            at = index[value]
            assert at <= high, f"partition {partition}: gap before {value} (after {expected[:high][-3:]})"
            if at < high:
                duplicates += 1
                assert at == previous + 1 or at < previous, f"partition {partition}: {value} out of order"
            high = max(high, at + 1)
            previous = at
        assert high == len(expected)
        distinct += high
    return distinct, duplicates


def test_a_job_reads_the_fed_stream_in_order_and_stops_its_feed(spark: Any, tmp_path: Path) -> None:
    register_dataframe("rates", rate_stream(spark), key="key", timestamp="ts", partitions=PARTITIONS)
    runner = LocalJobRunner(job_config(tmp_path), EchoTask)
    with running_in_background(runner, timeout=120) as errors:
        eventually(lambda: sum(map(len, read_echo(tmp_path).values())) >= 100, timeout=90)
        assert len(_feeds(spark)) == 1  # the container planned its own model, so it started the feed
    assert not errors
    assert not _feeds(spark)  # stopped with the container
    distinct, duplicates = check_at_least_once(read_echo(tmp_path))
    assert distinct >= 100
    assert duplicates == 0  # no crash: exactly once
    echo = read_echo(tmp_path)
    assert all(event == (value // 20) * 1000 for rows in echo.values() for value, event, _ in rows)
    # What the job wrote, read back by Spark with the samza-log data source.
    register_samza_log(spark)
    df = spark.read.format("samza-log").option("path", str(tmp_path / "log")).option("stream", "echo").load()
    rows = df.collect()
    assert sorted((r.partition, r.offset) for r in rows) == [
        (p, o) for p, values in sorted(echo.items()) for o in range(len(values))
    ]
    assert {(r.partition, pickle.loads(r.value)) for r in rows} == {
        (p, tuple(v)) for p, values in echo.items() for v in values
    }


def test_the_job_coordinator_feeds_after_planning_and_stops_in_stop(spark: Any, tmp_path: Path) -> None:
    register_dataframe("rates", rate_stream(spark), key="key", timestamp="ts", partitions=PARTITIONS)

    async def scenario() -> None:
        coordinator = JobCoordinator(job_config(tmp_path))
        await coordinator.start()
        try:
            assert len(_feeds(spark)) == 1
            assert sorted(coordinator.job_model.tasks) == ["Partition 0", "Partition 1"]
        finally:
            await coordinator.stop()
        assert not _feeds(spark)

    asyncio.run(scenario())


def _driver(base: Path, stop_at: int) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.spark.fed_job", str(base), str(stop_at)],
        cwd=ROOT,
        env=env,
        start_new_session=True,  # its own process group: the kill takes its JVM too
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_rows_arrive_in_order_across_a_kill_9_of_the_driver(tmp_path: Path) -> None:
    first = _driver(tmp_path, 10**9)
    try:
        seen = eventually(
            lambda: sum(map(len, read_echo(tmp_path).values())) >= 120 or first.poll() is not None,
            timeout=120,
            message="the first driver processes 120 rows",
        )
        assert first.poll() is None, first.stderr.read().decode() if first.stderr else ""
        assert seen
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        if first.stderr is not None:
            first.stderr.close()
    before = max(value for rows in read_echo(tmp_path).values() for value, _, _ in rows)
    second = _driver(tmp_path, before + 200)
    try:
        _, err = second.communicate(timeout=120)
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
    assert second.returncode == 0, err.decode()[-3000:]
    distinct, duplicates = check_at_least_once(read_echo(tmp_path))
    assert distinct > before + 150
    print(f"kill -9 at value {before}: {distinct} distinct values, {duplicates} duplicates")


def test_a_failed_feed_fails_the_job_naming_the_stream(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    bad = rate_stream(spark).withColumn("ts", F.lit("not a time"))  # a string timestamp column
    register_dataframe("rates", bad, key="key", timestamp="ts", partitions=PARTITIONS)
    runner = LocalJobRunner(job_config(tmp_path), EchoTask)
    with pytest.raises(SamzaError, match=r"spark\.rates.*feed of its streaming DataFrame failed.*'ts'"):
        runner.run(timeout=120)
    assert not _feeds(spark)
