"""Helpers for the Kafka integration tests: raw aiokafka produce/read, topic creation, job configs."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.eventually import aeventually

FACTORY = "samza_nb.systems.kafka.KafkaSystemFactory"
CHECKPOINTS = "samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory"


async def create_topic(bootstrap: str, name: str, partitions: int = 1) -> None:
    """Create ``name`` with ``partitions`` partitions (it must not exist)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        response = await admin.create_topics([NewTopic(name, partitions, 1)])
        assert all(error[1] == 0 for error in response.topic_errors), response
    finally:
        await admin.close()


async def produce(
    bootstrap: str,
    topic: str,
    messages: Iterable[bytes | None],
    *,
    partition: int | None = 0,
    keys: Sequence[bytes | None] | None = None,
    linger_ms: int = 20,
) -> None:
    """Send ``messages`` (batched, as a real producer does) and wait until all are acknowledged."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=linger_ms, acks="all")
    await producer.start()
    try:
        futures = []
        for index, value in enumerate(messages):
            key = keys[index] if keys is not None else None
            futures.append(await producer.send(topic, value, key=key, partition=partition))
        await producer.flush()
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def read_topic(bootstrap: str, topic: str, partitions: int) -> dict[int, list[tuple[Any, Any]]]:
    """Every (key, value) of every partition, from the oldest to the high watermark of a fetch."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, fetch_max_wait_ms=20)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, 0)
        result: dict[int, list[tuple[Any, Any]]] = {p: [] for p in range(partitions)}

        async def read_to_the_high_watermark() -> bool:
            batches = await consumer.getmany(timeout_ms=100)
            for tp, records in batches.items():
                result[tp.partition].extend((r.key, r.value) for r in records)
            for tp in tps:
                high = consumer.highwater(tp)
                if high is None or await consumer.position(tp) < high:
                    return False
            return True

        await aeventually(read_to_the_high_watermark, timeout=20, message=f"reading topic {topic}")
        return result
    finally:
        await consumer.stop()


def kafka_config(bootstrap: str, **extra: str) -> dict[str, str]:
    """A job config with Kafka system ``kafka`` (also the checkpoint system)."""
    config = {
        "systems.kafka.samza.factory": FACTORY,
        "systems.kafka.bootstrap.servers": bootstrap,
        "systems.kafka.samza.offset.default": "oldest",
        "task.checkpoint.factory": CHECKPOINTS,
        "task.checkpoint.system": "kafka",
        "systems.kafka.samza.broker.timeout.ms": "5000",
    }
    config.update(extra)
    return config


def write_properties(path: Any, config: dict[str, str]) -> None:
    """Write ``config`` as a .properties file."""
    path.write_text("".join(f"{key} = {value}\n" for key, value in config.items()), encoding="utf-8")


class Forwarder:
    """``forwarder.py`` as a process: clients reach the broker through ``port``; ``kill`` is a broker
    crash as the clients see it, ``start`` again brings the broker back with its data."""

    def __init__(self, port: int, target: int) -> None:
        self.port = port
        self.target = target
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> Forwarder:
        script = Path(__file__).with_name("forwarder.py")
        self.process = subprocess.Popen(
            [sys.executable, str(script), str(self.port), str(self.target)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        assert self.process.stdout.readline().strip() == "ready"
        return self

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        if self.process is not None and self.process.stdout is not None:
            self.process.stdout.close()
        self.process = None
