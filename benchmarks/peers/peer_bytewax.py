"""Bytewax's contenders, as its documentation writes a dataflow: ``bytewax.operators`` on a ``Dataflow``,
run by ``bytewax.testing.run_main`` (one worker) from ``TestingSource`` to ``TestingSink`` (W1-W3), and
from ``KafkaSource`` to ``KafkaSink`` (W4).

``TestingSource`` hands the dataflow batches of 1,000 items (its ``batch_size``; the default of 1 is
meant for tests, 1,000 is the default of ``KafkaSource``). Bytewax's operators are synchronous: W3's
calls overlap in ``flat_map_batch`` (the documented operator for one call per batch), each batch of 100
awaited with ``asyncio.gather`` on an event loop of the step."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import bytewax.operators as op
import kafka_io
import workloads as w
from bytewax.connectors.kafka import KafkaSink, KafkaSource
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, TestingSource, run_main

PACKAGES = ("bytewax", "confluent-kafka")
BATCH = 1000
UNSUPPORTED: dict[str, str] = {}


def _run(flow: Dataflow, n: int) -> float:
    seconds, _ = w.timed(lambda: run_main(flow))
    return n / seconds


def w1(p: w.Params) -> float:
    out: list[int] = []
    flow = Dataflow("w1")
    source = op.input("in", flow, TestingSource(w.w1_input(p.messages), batch_size=BATCH))
    kept = op.filter("keep", op.map("map", source, w.w1_map), w.w1_keep)
    op.output("out", kept, TestingSink(out))
    rate = _run(flow, p.messages)
    w.check_w1(out, p.messages)
    return rate


def _count(state: int | None, _message: Any) -> tuple[int, int]:
    count = (state or 0) + 1
    return count, count


def w2(p: w.Params) -> float:
    out: list[tuple[str, int]] = []
    flow = Dataflow("w2")
    source = op.input("in", flow, TestingSource(w.w2_input(p.messages, p.keys), batch_size=BATCH))
    keyed = op.key_on("key", source, lambda message: message["key"])
    op.output("out", op.stateful_map("count", keyed, _count), TestingSink(out))
    rate = _run(flow, p.messages)
    w.check_w2(out, p.messages, p.keys)
    return rate


def w3(p: w.Params) -> float:
    loop = asyncio.new_event_loop()

    async def gathered(batch: list[int]) -> list[int]:
        return await asyncio.gather(*(w.call(x) for x in batch))

    def calls(batch: list[int]) -> list[int]:
        return loop.run_until_complete(gathered(batch))

    out: list[int] = []
    flow = Dataflow("w3")
    source = op.input("in", flow, TestingSource(list(range(p.async_messages)), batch_size=w.CONCURRENCY))
    op.output("out", op.flat_map_batch("call", source, calls), TestingSink(out))
    try:
        rate = _run(flow, p.async_messages)
    finally:
        loop.close()
    w.check_w3(out, p.async_messages)
    return rate


def w4(p: w.Params) -> float:
    def copy(sink: str) -> float:
        flow = Dataflow("w4")
        source = op.input("in", flow, KafkaSource([p.bootstrap], [p.topic("W4")], tail=False))
        forwarded = op.map("forward", source, lambda message: w.FirstSeen.mark(message).to_sink())
        op.output("out", forwarded, KafkaSink([p.bootstrap], sink))
        w.FirstSeen.at = 0.0
        run_main(flow)  # returns once the sink's producer is flushed
        return p.kafka_messages / (time.perf_counter() - w.FirstSeen.at)

    return kafka_io.passthrough(p.bootstrap, p.topic("W4"), p.kafka_messages, p.partitions, copy)


WORKLOADS: dict[str, Callable[[w.Params], float]] = {"W1": w1, "W2": w2, "W3": w3, "W4": w4}
