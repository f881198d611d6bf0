"""Quix Streams' contenders, as its documentation writes an application: an ``Application`` on the
suite's broker, a ``StreamingDataFrame`` of the input topic with ``apply``/``filter`` (W1), a stateful
``apply`` (W2, its RocksDB state store), and ``to_topic``;
``Application.run(count=...)`` stops after the expected outputs. Quix reads only from Kafka, so its rows
run Kafka -> Kafka: inputs are written to the broker before the clock starts, and the clock runs from
the first message seen to ``run`` returning (its outputs then produced and committed), as for W4.

W2's store keeps its changelog topic (Quix's default), which Quix configures from the input topic's
``retention.ms``: the inputs are created with one (the suite's broker has no default to report)."""

from __future__ import annotations

import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import kafka_io
import workloads as w
from quixstreams import Application, State

PACKAGES = ("quixstreams", "confluent-kafka", "rocksdict")
UNSUPPORTED = {
    "W3": "Quix Streams' callbacks (`apply`, `update`, `filter`) are synchronous and it documents no way "
    "to keep calls in flight: at concurrency 1 a 5 ms call bounds it to 200 msg/s (1% of ideal)",
}


def _run(p: w.Params, build: Callable[[Application], Any], outputs: int) -> tuple[float, str]:
    """(seconds from the first message seen to ``run`` returning, output topic) of the application
    ``build`` describes, stopped after ``outputs`` outputs."""
    sink = kafka_io.new_topic("quix-out")
    with tempfile.TemporaryDirectory() as state:
        app = Application(
            broker_address=p.bootstrap,
            consumer_group=f"quix-{uuid.uuid4().hex[:8]}",
            auto_offset_reset="earliest",
            state_dir=state,
            loglevel="WARNING",
        )
        build(app).to_topic(app.topic(sink, value_serializer="json"))
        w.FirstSeen.at = 0.0
        app.run(count=outputs, collect=False)
        ended = time.perf_counter()
    return ended - w.FirstSeen.at, sink


def w1(p: w.Params) -> float:
    def build(app: Application) -> Any:
        sdf = app.dataframe(app.topic(p.topic("W1"), value_deserializer="json"))
        return sdf.apply(w.FirstSeen.mark).apply(w.w1_map).filter(w.w1_keep)

    expected = (p.messages + 1) // 2
    seconds, sink = _run(p, build, expected)
    w.check_w1(kafka_io.read_json(p.bootstrap, sink, expected), p.messages)  # type: ignore[arg-type]
    return p.messages / seconds


def _count(message: dict[str, str], state: State) -> list[Any]:
    count = state.get("count", 0) + 1
    state.set("count", count)
    return [message["key"], count]


def w2(p: w.Params) -> float:
    def build(app: Application) -> Any:
        sdf = app.dataframe(app.topic(p.topic("W2"), key_deserializer="str", value_deserializer="json"))
        return sdf.apply(w.FirstSeen.mark).apply(_count, stateful=True)

    seconds, sink = _run(p, build, p.messages)
    w.check_w2(kafka_io.read_json(p.bootstrap, sink, p.messages), p.messages, p.keys)  # type: ignore[arg-type]
    return p.messages / seconds


def w4(p: w.Params) -> float:
    def copy(sink: str) -> float:
        app = Application(
            broker_address=p.bootstrap,
            consumer_group=f"quix-{uuid.uuid4().hex[:8]}",
            auto_offset_reset="earliest",
            loglevel="WARNING",
        )
        source = app.topic(p.topic("W4"), key_deserializer="bytes", value_deserializer="bytes")
        sdf = app.dataframe(source).apply(w.FirstSeen.mark)
        sdf.to_topic(app.topic(sink, key_serializer="bytes", value_serializer="bytes"))
        w.FirstSeen.at = 0.0
        app.run(count=p.kafka_messages, collect=False)
        return p.kafka_messages / (time.perf_counter() - w.FirstSeen.at)

    return kafka_io.passthrough(p.bootstrap, p.topic("W4"), p.kafka_messages, p.partitions, copy)


WORKLOADS: dict[str, Callable[[w.Params], float]] = {"W1": w1, "W2": w2, "W4": w4}
