"""The feed of a streaming DataFrame into the durable log, and its consumer (real PySpark, local mode).

``rate-micro-batch`` makes deterministic batches: batch b holds values ``b*R .. b*R+R-1``. Every wait is on
an observed condition (``eventually``), never a sleep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.errors import SamzaError
from samza_nb.systems.partitioner import key_partition
from samza_nb.systems.spark.inputs.fed_log import FedStreamConsumer, LogFedStreams
from samza_nb.systems.spark.registry import register_dataframe, unregister_dataframe
from tests.eventually import eventually


def rate_stream(spark: Any, rows_per_batch: int) -> Any:
    """A rate-micro-batch stream with ``key`` (value mod 4, as str) and ``ts`` (the row's timestamp)."""
    from pyspark.sql import functions as F

    df = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", rows_per_batch)
        .option("numPartitions", 1)
        .load()
    )
    return df.select(
        F.col("value"), (F.col("value") % 4).cast("string").alias("key"), F.col("timestamp").alias("ts")
    )


@pytest.fixture
def fed(tmp_path: Path) -> Iterator[list[LogFedStreams]]:
    """LogFedStreams made by a test, whose feeds are stopped at its end."""
    made: list[LogFedStreams] = []
    yield made
    for streams in made:
        asyncio.run(streams.stop_feeding())
        streams.close()
    unregister_dataframe("rates")


def _config(tmp_path: Path, **extra: Any) -> Config:
    return Config({"job.logged.store.base.dir": str(tmp_path), "job.name": "feedtest", **extra})


class Reader:
    """A FedStreamConsumer polled on its own event loop, collecting what it hands out."""

    def __init__(self, config: Config, partitions: int) -> None:
        self.ssps = [SystemStreamPartition("spark", "rates", p) for p in range(partitions)]
        self.consumer = FedStreamConsumer(config, "spark")
        self.got: dict[int, list[Any]] = {p: [] for p in range(partitions)}
        self.loop = asyncio.new_event_loop()
        for ssp in self.ssps:
            self.consumer.register(ssp, "0")
        self.loop.run_until_complete(self.consumer.start())

    def poll(self) -> int:
        result = self.loop.run_until_complete(self.consumer.poll(self.ssps, 0.2))
        for ssp, envelopes in result.items():
            self.got[ssp.partition].extend(envelopes)
        return sum(len(v) for v in self.got.values())

    def close(self) -> None:
        self.loop.run_until_complete(self.consumer.stop())
        self.loop.close()


def test_rows_arrive_in_order_per_partition_none_lost(
    spark: Any, tmp_path: Path, fed: list[LogFedStreams]
) -> None:
    config = _config(tmp_path)
    register_dataframe(
        "rates", rate_stream(spark, 25), key="key", value="value", timestamp="ts", partitions=3
    )
    streams = LogFedStreams(config, "spark")
    fed.append(streams)
    assert streams.is_fed("rates")
    metadata = asyncio.run(streams.get_metadata(["rates"]))
    assert sorted(metadata["rates"]) == [0, 1, 2]
    asyncio.run(streams.start_feeding(["rates"]))
    asyncio.run(streams.start_feeding(["rates"]))  # idempotent: one query
    assert len([q for q in spark.streams.active if q.name and "rates" in q.name]) == 1
    reader = Reader(config, 3)
    try:
        eventually(lambda: reader.poll() >= 100, timeout=90)
    finally:
        reader.close()
    seen: list[int] = []
    for partition, envelopes in reader.got.items():
        values = [e.message for e in envelopes]
        assert values == sorted(values), f"partition {partition} out of order"
        for e in envelopes:
            assert e.key == str(e.message % 4)
            assert key_partition(e.key.encode(), 3) == partition
            assert e.timestamp == (e.message // 25) * 1000  # rate-micro-batch: 1 s per batch from 0
        assert [int(e.offset) for e in envelopes] == list(range(len(envelopes)))
        seen.extend(values)
    # Every batch is written whole before the next: the values seen are a prefix of 0, 1, 2, ... per batch.
    assert sorted(seen)[: (len(seen) // 25) * 25] == list(range((len(seen) // 25) * 25))
    asyncio.run(streams.stop_feeding())
    assert not [q for q in spark.streams.active if q.name and "rates" in q.name]


def test_backpressure_holds_the_feed_until_consumed(
    spark: Any, tmp_path: Path, fed: list[LogFedStreams]
) -> None:
    config = _config(tmp_path, **{"systems.spark.spark.max.backlog": "10"})
    register_dataframe("rates", rate_stream(spark, 20))
    streams = LogFedStreams(config, "spark")
    fed.append(streams)
    asyncio.run(streams.get_metadata(["rates"]))
    asyncio.run(streams.start_feeding(["rates"]))
    feed = streams.feeds["rates"]
    eventually(lambda: feed.held, timeout=60, message="the second batch waits for the backlog")
    assert streams.log.upcoming("rates", 0) == 20  # one batch written, the next held
    assert feed.backlog() == 20
    reader = Reader(config, 1)
    try:
        eventually(lambda: reader.poll() >= 60, timeout=60, message="consuming releases the feed")
        values = [e.message["value"] for e in reader.got[0]]
        assert values == list(range(len(values)))
    finally:
        reader.close()
    eventually(lambda: feed.batches >= 3)  # counted right after the flush that made the rows visible


def test_stop_feeding_stops_a_held_query(spark: Any, tmp_path: Path, fed: list[LogFedStreams]) -> None:
    config = _config(tmp_path, **{"systems.spark.spark.max.backlog": "0"})
    register_dataframe("rates", rate_stream(spark, 5))
    streams = LogFedStreams(config, "spark")
    fed.append(streams)
    asyncio.run(streams.start_feeding(["rates"]))
    feed = streams.feeds["rates"]
    eventually(lambda: feed.held, timeout=60)
    query = feed.query
    asyncio.run(streams.stop_feeding())
    assert not query.isActive
    assert streams.log.upcoming("rates", 0) == 5


def test_a_fed_stream_keeps_its_partition_count(spark: Any, tmp_path: Path, fed: list[LogFedStreams]) -> None:
    config = _config(tmp_path)
    register_dataframe("rates", rate_stream(spark, 5), key="key", partitions=2)
    streams = LogFedStreams(config, "spark")
    fed.append(streams)
    assert sorted(asyncio.run(streams.get_metadata(["rates"]))["rates"]) == [0, 1]
    register_dataframe("rates", rate_stream(spark, 5), key="key", partitions=3)
    with pytest.raises(
        SamzaError,
        match=r"stream 'rates' of system 'spark'.*2 partitions, not 3.*job\.logged\.store\.base\.dir",
    ):
        asyncio.run(streams.get_metadata(["rates"]))
