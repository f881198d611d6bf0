"""streamz's contenders, as its documentation writes a pipeline: ``Stream()`` with ``map``, ``filter``
and ``sink_to_list``, fed with ``emit`` (W1); ``map_async`` with ``parallelism`` = 100 on an asynchronous
stream (W3); ``Stream.from_kafka`` into ``to_kafka`` (W4).

W4 copies a topic of its own with fewer messages (``--streamz-kafka-messages``, 100): ``from_kafka``
waits for each message's delivery report before it polls the next, and ``to_kafka`` serves delivery
reports every 0.2 s, so it copies 5 messages a second (the suite's 200,000 would take 11 hours)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

import kafka_io
import workloads as w
from streamz import Stream

PACKAGES = ("streamz", "tornado", "confluent-kafka")
UNSUPPORTED = {
    "W2": "streamz keeps no keyed state: it has no state store and no per-key operator (`accumulate` "
    "folds the whole stream into one Python value, held in memory only)",
}


def w1(p: w.Params) -> float:
    source = Stream()
    out = source.map(w.w1_map).filter(w.w1_keep).sink_to_list()
    data = w.w1_input(p.messages)

    def run() -> None:
        emit = source.emit
        for message in data:
            emit(message)

    seconds, _ = w.timed(run)
    w.check_w1(out, p.messages)
    return p.messages / seconds


def w3(p: w.Params) -> float:
    out: list[int] = []
    data = list(range(p.async_messages))

    async def run() -> None:
        done = asyncio.Event()

        def collect(result: int) -> None:
            out.append(result)
            if len(out) == len(data):
                done.set()

        source = Stream(asynchronous=True)
        source.map_async(w.call, parallelism=w.CONCURRENCY).sink(collect)
        for x in data:
            await source.emit(x)
        await done.wait()

    seconds, _ = w.timed(lambda: asyncio.run(run()))
    w.check_w3(out, p.async_messages)
    return p.async_messages / seconds


def w4(p: w.Params) -> float:
    def copy(sink: str) -> float:
        consumer = {
            "bootstrap.servers": p.bootstrap,
            "group.id": f"streamz-{uuid.uuid4().hex[:8]}",
            "auto.offset.reset": "earliest",
        }
        delivered = 0
        done = threading.Event()

        def count(_value: Any) -> None:
            nonlocal delivered
            delivered += 1
            if delivered == n:
                done.set()

        w.FirstSeen.at = 0.0
        source = Stream.from_kafka([p.topic("W4-streamz")], consumer)
        out = source.map(w.FirstSeen.mark).to_kafka(sink, {"bootstrap.servers": p.bootstrap})
        out.sink(count)  # to_kafka emits each value once Kafka acknowledged it
        source.start()
        try:
            assert done.wait(3600), f"W4: {delivered} of {n} delivered"
            return n / (time.perf_counter() - w.FirstSeen.at)
        finally:
            source.stop()
            out.flush()

    n = p.streamz_kafka_messages
    # from_kafka emits each message's value only: the copy is checked value by value.
    return kafka_io.passthrough(p.bootstrap, p.topic("W4-streamz"), n, p.partitions, copy, keys=False)


WORKLOADS: dict[str, Callable[[w.Params], float]] = {"W1": w1, "W3": w3, "W4": w4}
