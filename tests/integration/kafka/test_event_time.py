"""Event time and intermediate stream messages through the real broker."""

from __future__ import annotations

import asyncio
import time

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.api.streams import IncomingMessageEnvelope
from samza_nb.control import EndOfStreamMessage, WatermarkMessage
from samza_nb.errors import SystemConsumersError, SystemProducerError
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.kafka import KafkaSystemFactory

from .helpers import create_topic, produce
from .test_consumer_producer import poll_until

INTERMEDIATE_SERDE = "samza_nb.control.serde.IntermediateMessageSerde"


def _config(bootstrap: str, topic: str) -> Config:
    return Config(
        {
            "systems.kafka.bootstrap.servers": bootstrap,
            f"systems.kafka.streams.{topic}.samza.msg.serde": INTERMEDIATE_SERDE,
            f"systems.kafka.streams.{topic}.samza.key.serde": "json",
            f"systems.kafka.streams.{topic}.partitions": "2",
        }
    )


async def _consume(config: Config, ssp: SystemStreamPartition, count: int) -> list[IncomingMessageEnvelope]:
    """The first ``count`` envelopes of ``ssp`` from offset 0."""
    consumer = KafkaSystemFactory().get_consumer("kafka", config)
    consumer.register(ssp, "0")
    await consumer.start()
    try:
        return (await poll_until(consumer, [ssp], count))[ssp]
    finally:
        await consumer.stop()


def test_event_time_and_control_messages_travel_through_kafka(kafka_broker: DevBroker, topic: str) -> None:
    """An envelope's timestamp becomes the record's and comes back as the consumer envelope's; control
    messages keep their type through the intermediate serde; a message without one gets the send time."""
    bootstrap = kafka_broker.bootstrap_servers
    config = _config(bootstrap, topic)
    out = SystemStream("kafka", topic)
    sends = [
        OutgoingMessageEnvelope(out, {"user": 1}, key="k", partition=1, timestamp=1_000),
        OutgoingMessageEnvelope(out, WatermarkMessage("Partition 0", timestamp=1_000), partition=1),
        OutgoingMessageEnvelope(out, {"user": 2}, key="k", partition=1),
        OutgoingMessageEnvelope(out, EndOfStreamMessage("Partition 0"), partition=1, timestamp=0),
    ]
    ssp = SystemStreamPartition("kafka", topic, 1)

    async def scenario() -> list[IncomingMessageEnvelope]:
        factory = KafkaSystemFactory()
        producer = factory.get_producer("kafka", config)
        await producer.start()
        try:
            for envelope in sends:
                producer.send("t", envelope)
            await producer.flush("t")
        finally:
            await producer.stop()
        return await _consume(config, ssp, 4)

    before = time.time() * 1000
    got = asyncio.run(scenario())
    assert [(e.key, e.message) for e in got] == [(s.key, s.message) for s in sends]
    assert [e.timestamp for e in got][::3] == [1_000, 0]
    assert got[1].timestamp is not None and got[1].timestamp > before - 60_000  # sent without: send time


def test_an_undecodable_intermediate_message_names_partition_and_offset(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"\x02{}", b"\x09?"])
        await _consume(_config(bootstrap, topic), ssp, 2)

    with pytest.raises(
        SystemConsumersError, match=rf"kafka\.{topic}#0 offset 1: .*unknown intermediate message type 9"
    ):
        asyncio.run(scenario())


@pytest.mark.parametrize("bad", [-1, 1.5, 2**63])
def test_a_timestamp_kafka_cannot_carry_is_refused_in_send(
    kafka_broker: DevBroker, topic: str, bad: object
) -> None:
    async def scenario() -> None:
        producer = KafkaSystemFactory().get_producer("kafka", _config(kafka_broker.bootstrap_servers, topic))
        await producer.start()
        try:
            with pytest.raises(SystemProducerError, match=rf"kafka\.{topic}: timestamp {bad!r} is not"):
                producer.send("t", OutgoingMessageEnvelope(SystemStream("kafka", topic), "x", timestamp=bad))  # type: ignore[arg-type]
        finally:
            await producer.stop()

    asyncio.run(scenario())
