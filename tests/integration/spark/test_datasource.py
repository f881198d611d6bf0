"""The ``samza-log`` data source: a durable-log stream read by Spark, batch and streaming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from samza_nb.systems.log import DurableLog
from samza_nb.systems.spark.datasource import register_samza_log
from tests.eventually import eventually


@pytest.fixture
def log_dir(tmp_path: Path, spark: Any) -> Path:
    """A log with stream ``views`` (2 partitions): JSON dicts with keys and event times."""
    register_samza_log(spark)
    with DurableLog(tmp_path) as log:
        log.create_stream("views", 2)
        for i in range(10):
            view = json.dumps({"user": f"u{i % 3}", "n": i})
            log.send("views", view, key=f"u{i % 3}", partition=i % 2, timestamp=1_000 * i)
        log.flush()
    return tmp_path


def test_batch_read_has_the_records_as_stored(spark: Any, log_dir: Path) -> None:
    df = spark.read.format("samza-log").option("path", str(log_dir)).option("stream", "views").load()
    assert df.columns == ["partition", "offset", "timestamp", "key", "value"]
    rows = sorted(df.collect(), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset) for r in rows] == [(p, o) for p in (0, 1) for o in range(5)]
    first = rows[0]
    assert bytes(first.key) == b"u0"
    assert json.loads(bytes(first.value)) == {"user": "u0", "n": 0}
    assert first.timestamp.timestamp() == 0
    assert rows[5].timestamp.timestamp() == 1.0  # partition 1's first record: i = 1


def test_a_serde_and_a_schema_decode_the_values_into_columns(spark: Any, log_dir: Path) -> None:
    reader = spark.read.format("samza-log").option("path", str(log_dir)).option("stream", "views")
    texts = reader.option("serde", "string").load()
    assert dict(texts.dtypes)["value"] == "string"
    fields = (
        reader.option("key.serde", "string")
        .option("value.serde", "json")
        .schema("user string, n long, offset long")
        .load()
    )
    counts = {r.user: r["count"] for r in fields.groupBy("user").count().collect()}
    assert counts == {"u0": 4, "u1": 3, "u2": 3}
    assert sorted(r.n for r in fields.collect()) == list(range(10))


def test_a_missing_stream_is_an_error_naming_it(spark: Any, log_dir: Path) -> None:
    with pytest.raises(Exception, match="no durable log stream 'nope'"):
        spark.read.format("samza-log").option("path", str(log_dir)).option("stream", "nope").load().collect()


def test_readstream_sees_records_flushed_later(spark: Any, log_dir: Path) -> None:
    stream = (
        spark.readStream.format("samza-log").option("path", str(log_dir)).option("stream", "views").load()
    )
    query = stream.writeStream.format("memory").queryName("samza_log_views").start()
    try:
        query.processAllAvailable()
        assert spark.table("samza_log_views").count() == 10
        with DurableLog(log_dir) as log:
            for i in range(10, 14):
                log.send("views", json.dumps({"user": "u9", "n": i}), partition=i % 2)
            log.flush()
        eventually(lambda: (query.processAllAvailable(), spark.table("samza_log_views").count())[1] == 14)
        offsets = sorted((r.partition, r.offset) for r in spark.table("samza_log_views").collect())
        assert offsets == [(p, o) for p in (0, 1) for o in range(7)]
    finally:
        query.stop()
