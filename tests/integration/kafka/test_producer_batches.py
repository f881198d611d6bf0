"""The Kafka producer builds record batches per partition from each run of queued messages: what that must
keep (order, partitioning, all-or-nothing batches of envelopes) on the real broker."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream
from samza_nb.errors import SystemProducerError
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.kafka import KafkaSystemFactory, KafkaSystemProducer

from .helpers import create_topic, read_topic


def producer_for(bootstrap: str, **settings: str) -> KafkaSystemProducer:
    producer = KafkaSystemFactory().get_producer(
        "kafka", Config({"systems.kafka.bootstrap.servers": bootstrap, **settings})
    )
    assert isinstance(producer, KafkaSystemProducer)
    return producer


def produce(
    broker: DevBroker,
    topic: str,
    partitions: int,
    send: Callable[[KafkaSystemProducer], Awaitable[None]],
    **settings: str,
) -> dict[int, list[tuple[Any, Any]]]:
    """Create ``topic``, let ``send`` use a started producer (stopped after it), read the topic back."""
    bootstrap = broker.bootstrap_servers

    async def scenario() -> dict[int, list[tuple[Any, Any]]]:
        await create_topic(bootstrap, topic, partitions)
        producer = producer_for(bootstrap, **settings)
        await producer.start()
        try:
            await send(producer)
        finally:
            await producer.stop()
        return await read_topic(bootstrap, topic, partitions)

    return asyncio.run(scenario())


def test_a_run_larger_than_a_batch_keeps_each_partitions_order(kafka_broker: DevBroker, topic: str) -> None:
    """3,000 messages of 1 KB over 2 partitions in one run fill many 16 KB batches per partition; each
    partition still holds its messages in send order."""
    out = SystemStream("kafka", topic)

    async def send(producer: KafkaSystemProducer) -> None:
        producer.send_batch(
            [OutgoingMessageEnvelope(out, b"%06d" % i + b"x" * 1018, partition=i % 2) for i in range(3000)]
        )
        await producer.flush("t")

    held = produce(kafka_broker, topic, 2, send, **{"systems.kafka.producer.max.batch.size": "16384"})
    for partition in (0, 1):
        numbers = [int(value[:6]) for _, value in held[partition]]
        assert numbers == list(range(partition, 3000, 2))


def test_send_batch_is_all_or_nothing(kafka_broker: DevBroker, topic: str) -> None:
    """An envelope the serde refuses fails the whole send_batch before anything is queued; the producer
    stays usable."""
    out = SystemStream("kafka", topic)

    async def send(producer: KafkaSystemProducer) -> None:
        with pytest.raises(
            SystemProducerError,
            match=r"'text' \(str\) is not bytes: systems\.kafka\.samza\.msg\.serde is not set",
        ):
            producer.send_batch(
                [
                    OutgoingMessageEnvelope(out, b"a"),
                    OutgoingMessageEnvelope(out, "text"),
                    OutgoingMessageEnvelope(out, b"c"),
                ]
            )
        with pytest.raises(
            SystemProducerError, match=r"header 'h' has a str value \('not bytes'\); header values are bytes"
        ):
            producer.send_batch([OutgoingMessageEnvelope(out, b"a", headers=(("h", "not bytes"),))])  # type: ignore[arg-type]
        producer.send_batch([OutgoingMessageEnvelope(out, b"after")])
        await producer.flush("t")

    assert produce(kafka_broker, topic, 1, send) == {0: [(None, b"after")]}


def test_messages_without_key_or_partition_stick_to_one_partition_per_run(
    kafka_broker: DevBroker, topic: str
) -> None:
    """Kafka's sticky partitioning: a run's keyless messages go to one partition, the next run's to the
    next partition."""
    out = SystemStream("kafka", topic)

    async def send(producer: KafkaSystemProducer) -> None:
        for run in range(3):
            producer.send_batch([OutgoingMessageEnvelope(out, b"%d-%d" % (run, i)) for i in range(10)])
            await producer.flush("t")  # the sender takes each run on its own

    held = produce(kafka_broker, topic, 3, send)
    runs = {partition: {value.split(b"-")[0] for _, value in records} for partition, records in held.items()}
    assert sorted(map(len, runs.values())) == [1, 1, 1], runs  # each partition holds exactly one run
    assert sum(len(records) for records in held.values()) == 30


class TextSerde:
    """A user serde with a bug: it returns str, not bytes."""

    def to_bytes(self, obj: Any) -> Any:
        return str(obj)

    def from_bytes(self, data: bytes) -> Any:
        return data.decode()


def test_what_the_broker_would_refuse_raises_in_send(kafka_broker: DevBroker, topic: str) -> None:
    """A serde returning str, a record over max.request.size and a header name that is not UTF-8 raise in
    the sending task, naming the stream; nothing is lost silently and the producer stays usable."""
    out = SystemStream("kafka", topic)

    async def send(producer: KafkaSystemProducer) -> None:
        with pytest.raises(SystemProducerError, match=rf"{topic}: serde TextSerde returned a str, not bytes"):
            producer.send("t", OutgoingMessageEnvelope(out, b"v", key="k"))
        with pytest.raises(
            SystemProducerError, match=r"3145\d+ bytes as a record, more than .*max.request.size"
        ):
            producer.send("t", OutgoingMessageEnvelope(out, b"x" * 3 * 1024 * 1024))
        with pytest.raises(SystemProducerError, match="header name '\\\\ud800' is not valid text"):
            producer.send("t", OutgoingMessageEnvelope(out, b"v", headers=(("\ud800", b"x"),)))
        producer.send("t", OutgoingMessageEnvelope(out, b"after"))
        await producer.flush("t")

    key_serde = {f"systems.kafka.streams.{topic}.samza.key.serde": f"{__name__}.TextSerde"}
    assert produce(kafka_broker, topic, 1, send, **key_serde) == {0: [(None, b"after")]}
