"""samza_nb's contenders, written as the README's quickstart writes a job: low-level task classes run by
TestRunner on the in-memory system (W1-W3; W1 and W3 send with ``collector.send_to``, W2 with keyed
envelopes), and the pass-through job of benchmarks/kafka_passthrough.py
run by LocalJobRunner on the Kafka system (W4)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import kafka_io
import workloads as w
from kafka_passthrough import Forward, samza_job

from samza_nb import OutgoingMessageEnvelope, SystemStream
from samza_nb.testing import TestRunner

NAME = "samza_nb"
PACKAGES = ("samza_nb", "duckdb", "aiokafka")
OUT = SystemStream("test", "out")
UNSUPPORTED: dict[str, str] = {}


class MapFilter:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        value = w.w1_map(envelope.message)
        if w.w1_keep(value):
            collector.send_to(OUT, value)


class KeyedCount:
    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        key = envelope.message["key"]
        count = (self.counts.get(key) or 0) + 1
        self.counts.put(key, count)
        collector.send(OutgoingMessageEnvelope(OUT, (key, count), key=key))


class RemoteCall:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send_to(OUT, await w.call(envelope.message))


def _run(runner: TestRunner, n: int) -> tuple[float, list[Any]]:
    runner.add_output("out")
    seconds, result = w.timed(lambda: runner.run(timeout=1800))
    assert result.processed == n, (result.processed, n)
    return n / seconds, result.output("out")[0]


def w1(p: w.Params) -> float:
    rate, out = _run(TestRunner.of(MapFilter).add_input("in", w.w1_input(p.messages)), p.messages)
    w.check_w1(out, p.messages)
    return rate


def w2(p: w.Params) -> float:
    store = {
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "long",
    }
    runner = TestRunner.of(KeyedCount).add_input("in", w.w2_input(p.messages, p.keys)).add_config(store)
    rate, out = _run(runner, p.messages)
    w.check_w2(out, p.messages, p.keys)
    return rate


def w3(p: w.Params) -> float:
    runner = (
        TestRunner.of(RemoteCall)
        .add_input("in", list(range(p.async_messages)))
        .add_config({"task.max.concurrency": str(w.CONCURRENCY)})
    )
    rate, out = _run(runner, p.async_messages)
    w.check_w3(out, p.async_messages)
    return rate


def w4(p: w.Params) -> float:
    job = samza_job(Forward, 1)

    def copy(sink: str) -> float:
        return job(p.bootstrap, p.topic("W4"), sink, p.kafka_messages, p.partitions, "none")

    return kafka_io.passthrough(p.bootstrap, p.topic("W4"), p.kafka_messages, p.partitions, copy)


WORKLOADS: dict[str, Callable[[w.Params], float]] = {"W1": w1, "W2": w2, "W3": w3, "W4": w4}
