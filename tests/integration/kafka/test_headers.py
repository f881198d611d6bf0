"""Kafka record headers on the real broker: read onto ``envelope.headers``, written from
``OutgoingMessageEnvelope.headers``, and through a job (Kafka → task → Kafka), beside a second client
(confluent-kafka) writing and reading them."""

from __future__ import annotations

import asyncio
import time
from typing import Any, ClassVar

import aiokafka.codec
import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.api.streams import NO_HEADERS, Headers
from samza_nb.errors import ConfigError, SystemConsumersError, SystemProducerError
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.kafka import KafkaSystemConsumer, KafkaSystemFactory
from tests.eventually import aeventually
from tests.requirements import require

from .helpers import create_topic, kafka_config

confluent_kafka = require("confluent_kafka", "the dev extra installs it (a second Kafka client for tests)")

HEADERS: Headers = (("trace", b"abc"), ("n", b"\x00\x01"), ("trace", b"again"), ("empty", None), ("ü", b""))
"""Repeated names, a binary value, a null value and a non-ASCII name, in an order that must be kept."""


def confluent_produce(bootstrap: str, topic: str, records: list[tuple[bytes, Headers]], codec: str) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "compression.type": codec})
    for value, headers in records:
        producer.produce(topic, value, partition=0, headers=list(headers) if headers else None)
    assert producer.flush(30) == 0


def confluent_read(bootstrap: str, topic: str, count: int) -> list[tuple[bytes, Headers]]:
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": f"g-{topic}", "enable.auto.commit": False}
    )
    try:
        consumer.assign([confluent_kafka.TopicPartition(topic, 0, 0)])
        got: list[tuple[bytes, Headers]] = []
        deadline = time.monotonic() + 30
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None:
                continue
            assert message.error() is None, message.error()
            got.append((message.value(), tuple(message.headers() or ())))
        return got
    finally:
        consumer.close()


async def poll_all(consumer: KafkaSystemConsumer, ssp: SystemStreamPartition, count: int) -> list[Any]:
    got: list[Any] = []

    async def all_arrived() -> bool:
        got.extend((await consumer.poll([ssp], 0.2)).get(ssp, []))
        return len(got) >= count

    await aeventually(all_arrived, timeout=30, message=f"{count} envelopes of {ssp}")
    return got


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_headers_another_client_wrote_are_on_the_envelopes(
    kafka_broker: DevBroker, topic: str, codec: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)
    asyncio.run(create_topic(bootstrap, topic))
    confluent_produce(bootstrap, topic, [(b"plain", ()), (b"with", HEADERS), (b"plain2", ())], codec)

    async def scenario(serde: str | None) -> list[Any]:
        extra = {"systems.kafka.samza.msg.serde": serde} if serde else {}
        config = Config({"systems.kafka.bootstrap.servers": bootstrap, **extra})
        consumer = KafkaSystemFactory().get_consumer("kafka", config)
        consumer.register(ssp, "0")
        await consumer.start()
        try:
            return await poll_all(consumer, ssp, 3)
        finally:
            await consumer.stop()

    for serde in (None, "string"):  # the fetcher's plain path and its deserializing path
        envelopes = asyncio.run(scenario(serde))
        assert [e.headers for e in envelopes] == [(), HEADERS, ()]
        assert envelopes[0].headers is NO_HEADERS and envelopes[2].headers is NO_HEADERS


def test_outgoing_headers_are_written_to_the_records(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    stream = SystemStream("kafka", topic)

    async def scenario() -> None:
        await create_topic(bootstrap, topic)
        producer = KafkaSystemFactory().get_producer(
            "kafka", Config({"systems.kafka.bootstrap.servers": bootstrap})
        )
        await producer.start()
        try:
            producer.send("t", OutgoingMessageEnvelope(stream, b"a", headers=HEADERS))
            producer.send("t", OutgoingMessageEnvelope(stream, b"b"))
            producer.send("t", OutgoingMessageEnvelope(stream, b"c", headers=(("k", bytearray(b"v")),)))
            await producer.flush("t")
        finally:
            await producer.stop()

    asyncio.run(scenario())
    assert confluent_read(bootstrap, topic, 3) == [(b"a", HEADERS), (b"b", ()), (b"c", (("k", b"v"),))]


@pytest.mark.parametrize(
    ("headers", "error"),
    [
        ((("n", "text"),), r"header 'n' has a str value \('text'\); header values are bytes"),
        (((1, b"v"),), r"header name 1 is a int, not a str"),
        ((("only-a-name",),), r"headers .* are not \(name, value\) pairs"),
    ],
)
def test_headers_kafka_cannot_carry_are_refused_naming_the_stream(
    kafka_broker: DevBroker, topic: str, headers: Any, error: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers

    async def scenario() -> None:
        producer = KafkaSystemFactory().get_producer(
            "kafka", Config({"systems.kafka.bootstrap.servers": bootstrap})
        )
        await producer.start()
        try:
            with pytest.raises(SystemProducerError, match=rf"message to kafka\.{topic}: {error}"):
                producer.send(
                    "t", OutgoingMessageEnvelope(SystemStream("kafka", topic), b"x", headers=headers)
                )
        finally:
            await producer.stop()

    asyncio.run(scenario())


class CopyHeaders:
    """Forwards each message with its headers and one more naming the offset it came from."""

    output: ClassVar[str] = ""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        headers = (*envelope.headers, ("from-offset", envelope.offset.encode()))
        collector.send(
            OutgoingMessageEnvelope(SystemStream("kafka", self.output), envelope.message, headers=headers)
        )


def test_headers_round_trip_through_a_job(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    output = f"{topic}-out"
    asyncio.run(create_topic(bootstrap, topic))
    asyncio.run(create_topic(bootstrap, output))
    confluent_produce(bootstrap, topic, [(b"m0", HEADERS), (b"m1", ()), (b"m2", (("x", b"y"),))], "zstd")
    CopyHeaders.output = output
    config = Config(kafka_config(bootstrap, **{"job.name": topic, "task.inputs": f"kafka.{topic}"}))
    LocalJobRunner(config, CopyHeaders, max_messages=3).run(timeout=60)
    assert confluent_read(bootstrap, output, 3) == [
        (b"m0", (*HEADERS, ("from-offset", b"0"))),
        (b"m1", (("from-offset", b"1"),)),
        (b"m2", (("x", b"y"), ("from-offset", b"2"))),
    ]


def test_a_codec_whose_library_is_missing_is_one_clear_error(
    kafka_broker: DevBroker, topic: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)
    asyncio.run(create_topic(bootstrap, topic))
    confluent_produce(bootstrap, topic, [(b"x" * 1000, ())], "lz4")  # compressible: librdkafka compresses it
    monkeypatch.setattr(aiokafka.codec, "cramjam", None)  # as on a machine without the kafka extra's codecs

    async def consume() -> None:
        consumer = KafkaSystemFactory().get_consumer(
            "kafka", Config({"systems.kafka.bootstrap.servers": bootstrap})
        )
        consumer.register(ssp, "0")
        await consumer.start()
        try:
            await poll_all(consumer, ssp, 1)
        finally:
            await consumer.stop()

    with pytest.raises(SystemConsumersError, match=rf"kafka\.{topic}#0: the record batch at offset 0 .*lz4"):
        asyncio.run(consume())

    async def produce(codec: str) -> None:
        config = Config(
            {"systems.kafka.bootstrap.servers": bootstrap, "systems.kafka.producer.compression.type": codec}
        )
        producer = KafkaSystemFactory().get_producer("kafka", config)
        try:
            await producer.start()
        finally:
            await producer.stop()

    key = r"systems\.kafka\.producer\.compression\.type"
    with pytest.raises(ConfigError, match=rf"{key}='zstd': Compression library for zstd not found"):
        asyncio.run(produce("zstd"))
    with pytest.raises(ConfigError, match=rf"{key}='brotli': expected none or one of gzip, snappy"):
        asyncio.run(produce("brotli"))
    asyncio.run(produce("none"))
