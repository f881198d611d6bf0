"""The Kafka side of the peers benchmark: topics filled before any clock starts, outputs read back to be
checked, and the W4 harness every pass-through contender runs in (a fresh output topic, the copy checked
to hold every message, each once)."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from kafka_passthrough import create_topic, read_back  # benchmarks/kafka_passthrough.py
from output_check import same  # benchmarks/output_check.py

Record = tuple[bytes | None, bytes]


def new_topic(prefix: str) -> str:
    return f"peers-{prefix}-{uuid.uuid4().hex[:8]}"


async def fill(bootstrap: str, topic: str, records: list[Record], partitions: int = 1) -> None:
    """Create ``topic`` and write ``records`` round robin over its partitions, in large batches."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:  # a retention Quix Streams can read back (it copies it to the topics it derives from this one)
        await admin.create_topics([NewTopic(topic, partitions, 1, topic_configs={"retention.ms": "-1"})])
    finally:
        await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, max_batch_size=1 << 20, acks="all")
    await producer.start()
    try:
        futures = []
        for partition in range(partitions):
            batch = producer.create_batch()
            for key, value in records[partition::partitions]:
                if batch.append(key=key, value=value, timestamp=None) is None:
                    futures.append(await producer.send_batch(batch, topic, partition=partition))
                    batch = producer.create_batch()
                    batch.append(key=key, value=value, timestamp=None)
            futures.append(await producer.send_batch(batch, topic, partition=partition))
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


def fill_json(bootstrap: str, topic: str, messages: list[dict[str, object]], key: str | None = None) -> None:
    """``messages`` as JSON values on a one-partition topic (keyed by ``message[key]`` when given)."""
    records = [
        (None if key is None else str(m[key]).encode(), json.dumps(m, separators=(",", ":")).encode())
        for m in messages
    ]
    asyncio.run(fill(bootstrap, topic, records))


async def _read(bootstrap: str, topic: str, partitions: int, expected: int) -> list[Record]:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        records: list[Record] = []
        while len(records) < expected:
            batches = await consumer.getmany(timeout_ms=10_000)
            if not batches:
                break
            records.extend((r.key, r.value) for rs in batches.values() for r in rs)
        return records
    finally:
        await consumer.stop()


def read_json(bootstrap: str, topic: str, expected: int, partitions: int = 1) -> list[object]:
    """The JSON values on ``topic``, read until ``expected`` came or none came for 10 s."""
    return [json.loads(value) for _, value in asyncio.run(_read(bootstrap, topic, partitions, expected))]


def passthrough(
    bootstrap: str,
    source: str,
    messages: int,
    partitions: int,
    copy: Callable[[str], float],
    keys: bool = True,
) -> float:
    """Run ``copy(sink)`` (a rate) into a fresh ``partitions``-partition topic and check that it holds
    every message of ``source`` once (with ``keys`` False, every value: a copy that drops the keys)."""
    sink = new_topic("w4-out")
    asyncio.run(create_topic(bootstrap, sink, partitions))
    rate = copy(sink)
    copied = asyncio.run(read_back(bootstrap, sink, partitions, messages))
    written = asyncio.run(read_back(bootstrap, source, partitions, messages))
    # Each message exactly once (a peer's sink may partition by its key's hash, not as it came in).
    same("W4: the messages copied", _all(copied, keys), _all(written, keys))
    return rate


def _all(read: dict[int, list[Record]], keys: bool) -> list[Record]:
    return sorted(record if keys else (None, record[1]) for records in read.values() for record in records)
