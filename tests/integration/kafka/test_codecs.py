"""Every Kafka compression codec, both ways, on the real broker, beside a second client (confluent-kafka,
librdkafka with every codec built in): batches it compresses are consumed by samza_nb, and samza_nb's output
with ``compression.type`` = each codec is read back by it. Each test also reads the stored batches raw and
checks they carry the codec, so a codec silently not applied would fail them."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaClient, TopicPartition
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.record.memory_records import MemoryRecords

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.kafka import KafkaSystemFactory
from tests.eventually import aeventually
from tests.requirements import require

from .helpers import create_topic

confluent_kafka = require("confluent_kafka", "the dev extra installs it (a second Kafka client for tests)")

CODECS = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
"""Kafka's codec id (the low 3 bits of a batch's attributes) of each compression.type."""
COUNT = 300


def payload(index: int) -> bytes:
    """A compressible value of a few hundred bytes."""
    return b"value %05d " % index + b"abcdefgh" * 40


async def stored_codecs(bootstrap: str, topic: str) -> list[int]:
    """The codec id of every record batch stored in partition 0 of ``topic``, in order."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    try:
        await client.set_topics([topic])
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        codecs: list[int] = []
        position = 0
        while position < COUNT:
            request = FetchRequest(100, 1, 52428800, 0, [(topic, [(0, position, 52428800)])])
            response = await client.send(leader, request)
            data = response.topics[0][1][0][-1]
            records = MemoryRecords(data)
            while records.has_next():
                batch = records.next_batch()
                codecs.append(batch.compression_type)
                position = batch.next_offset
        return codecs
    finally:
        await client.close()


def confluent_produce(bootstrap: str, topic: str, codec: str) -> None:
    producer = confluent_kafka.Producer(
        {"bootstrap.servers": bootstrap, "compression.type": codec, "linger.ms": 50, "acks": "all"}
    )
    failures: list[str] = []

    def delivered(error: object, _message: object) -> None:
        if error is not None:
            failures.append(str(error))

    for index in range(COUNT):
        producer.produce(topic, payload(index), key=b"k%d" % index, partition=0, on_delivery=delivered)
    assert producer.flush(30) == 0
    assert failures == []


def confluent_read(bootstrap: str, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "enable.auto.commit": False}
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        got: list[tuple[bytes | None, bytes | None]] = []
        deadline = time.monotonic() + 30
        while len(got) < COUNT and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            assert message.error() is None, message.error()
            got.append((message.key(), message.value()))
        return got
    finally:
        consumer.close()


@pytest.mark.parametrize("codec", list(CODECS))
def test_batches_another_client_compressed_are_consumed(
    kafka_broker: DevBroker, topic: str, codec: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)
    asyncio.run(create_topic(bootstrap, topic))
    confluent_produce(bootstrap, topic, codec)

    async def scenario() -> tuple[list[int], list[tuple[str, bytes | None, bytes | None]]]:
        codecs = await stored_codecs(bootstrap, topic)
        consumer = KafkaSystemFactory().get_consumer(
            "kafka", Config({"systems.kafka.bootstrap.servers": bootstrap})
        )
        consumer.register(ssp, "0")
        await consumer.start()
        got: list[tuple[str, bytes | None, bytes | None]] = []
        try:

            async def all_arrived() -> bool:
                batches = await consumer.poll([ssp], 0.2)
                got.extend((e.offset, e.key, e.message) for e in batches.get(ssp, []))
                return len(got) >= COUNT

            await aeventually(all_arrived, timeout=30, message=f"{COUNT} {codec} messages")
        finally:
            await consumer.stop()
        return codecs, got

    codecs, got = asyncio.run(scenario())
    assert codecs and set(codecs) == {CODECS[codec]}
    assert got == [(str(i), b"k%d" % i, payload(i)) for i in range(COUNT)]


@pytest.mark.parametrize("codec", list(CODECS))
def test_output_compressed_with_each_codec_is_read_back(
    kafka_broker: DevBroker, topic: str, codec: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    config = Config(
        {
            "systems.kafka.bootstrap.servers": bootstrap,
            "systems.kafka.producer.compression.type": codec,
            "systems.kafka.producer.linger.ms": "20",
        }
    )
    stream = SystemStream("kafka", topic)

    async def scenario() -> list[int]:
        await create_topic(bootstrap, topic)
        producer = KafkaSystemFactory().get_producer("kafka", config)
        await producer.start()
        try:
            for index in range(COUNT):
                producer.send("task", OutgoingMessageEnvelope(stream, payload(index), key=b"k%d" % index))
            await producer.flush("task")
        finally:
            await producer.stop()
        return await stored_codecs(bootstrap, topic)

    codecs = asyncio.run(scenario())
    assert codecs and set(codecs) == {CODECS[codec]}
    assert confluent_read(bootstrap, topic) == [(b"k%d" % i, payload(i)) for i in range(COUNT)]
