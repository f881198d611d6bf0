"""KafkaSystemConsumer and KafkaSystemProducer against the real broker."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from aiokafka.partitioner import murmur2

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.api.streams import IncomingMessageEnvelope
from samza_nb.errors import ConfigError, SystemConsumersError, SystemProducerError
from samza_nb.runtime.dev_broker import DevBroker, free_port
from samza_nb.systems.kafka import KafkaSystemConsumer, KafkaSystemFactory, KafkaSystemProducer
from tests.eventually import aeventually

from .helpers import create_topic, produce, read_topic


def config_for(bootstrap: str, **extra: str) -> Config:
    return Config({"systems.kafka.bootstrap.servers": bootstrap, **extra})


async def poll_until(
    consumer: KafkaSystemConsumer, ssps: Sequence[SystemStreamPartition], count: int, timeout: float = 20
) -> dict[SystemStreamPartition, list[IncomingMessageEnvelope]]:
    """Poll ``ssps`` until ``count`` envelopes arrived in all."""
    got: dict[SystemStreamPartition, list[IncomingMessageEnvelope]] = {ssp: [] for ssp in ssps}

    async def all_arrived() -> bool:
        batches: Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = await consumer.poll(
            ssps, 0.2
        )
        for ssp, envelopes in batches.items():
            got.setdefault(ssp, []).extend(envelopes)
        return sum(map(len, got.values())) >= count

    if count > 0:
        await aeventually(all_arrived, timeout=timeout, message=f"{count} envelopes from {list(ssps)}")
    return got


def test_consumer_reads_from_starting_offsets_with_offsets_timestamps_and_bytes(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    p0, p1 = SystemStreamPartition("kafka", topic, 0), SystemStreamPartition("kafka", topic, 1)

    async def scenario() -> dict[SystemStreamPartition, list[IncomingMessageEnvelope]]:
        await create_topic(bootstrap, topic, 2)
        await produce(bootstrap, topic, [b"x%d" % i for i in range(12)], partition=0, keys=[b"k"] * 12)
        await produce(bootstrap, topic, [b"y%d" % i for i in range(3)], partition=1)
        consumer = KafkaSystemFactory().get_consumer("kafka", config_for(bootstrap))
        consumer.register(p0, "10")
        consumer.register(p1, "0")
        await consumer.start()
        try:
            return await poll_until(consumer, [p0, p1], 5)
        finally:
            await consumer.stop()

    got = asyncio.run(scenario())
    assert [(e.offset, e.key, e.message) for e in got[p0]] == [("10", b"k", b"x10"), ("11", b"k", b"x11")]
    assert [(e.offset, e.key, e.message) for e in got[p1]] == [(str(i), None, b"y%d" % i) for i in range(3)]
    assert all(e.ssp is p0 for e in got[p0])
    now_ms = time.time() * 1000
    assert all(isinstance(e.timestamp, int) and abs(e.timestamp - now_ms) < 600_000 for e in got[p0])


@pytest.mark.faults
def test_a_partition_not_polled_waits_and_loses_nothing(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    p0, p1 = SystemStreamPartition("kafka", topic, 0), SystemStreamPartition("kafka", topic, 1)

    async def scenario() -> tuple[list[str], list[str]]:
        await create_topic(bootstrap, topic, 2)
        await produce(bootstrap, topic, [b"%d" % i for i in range(3000)], partition=0)
        await produce(bootstrap, topic, [b"%d" % i for i in range(3000)], partition=1)
        consumer = KafkaSystemFactory().get_consumer(
            "kafka", config_for(bootstrap, **{"systems.kafka.consumer.max.partition.fetch.bytes": "4096"})
        )
        consumer.register(p0, "0")
        consumer.register(p1, "0")
        await consumer.start()
        try:
            only_p0 = await poll_until(consumer, [p0], 3000)  # p1 is held back meanwhile
            assert p1 not in only_p0
            rest = await poll_until(consumer, [p1], 3000)
        finally:
            await consumer.stop()
        return [e.offset for e in only_p0[p0]], [e.offset for e in rest[p1]]

    first, second = asyncio.run(scenario())
    assert first == [str(i) for i in range(3000)]
    assert second == [str(i) for i in range(3000)]


def test_serdes_round_trip_through_the_broker(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    config = config_for(
        bootstrap,
        **{
            "systems.kafka.samza.key.serde": "string",
            "systems.kafka.samza.msg.serde": "json",
            f"systems.kafka.streams.{topic}-raw.samza.msg.serde": "bytes",
            f"systems.kafka.streams.{topic}-raw.samza.key.serde": "long",
        },
    )
    ssp = SystemStreamPartition("kafka", topic, 0)

    async def scenario() -> tuple[list[tuple[Any, Any]], dict[int, list[tuple[Any, Any]]]]:
        factory = KafkaSystemFactory()
        producer = factory.get_producer("kafka", config)
        await producer.start()
        try:
            for i in range(3):
                producer.send(
                    "t", OutgoingMessageEnvelope(SystemStream("kafka", topic), {"n": i}, key=f"k{i}")
                )
            producer.send("t", OutgoingMessageEnvelope(SystemStream("kafka", topic), None, key="gone"))
            producer.send(
                "t", OutgoingMessageEnvelope(SystemStream("kafka", topic + "-raw"), b"\x00raw", key=7)
            )
            await producer.flush("t")
        finally:
            await producer.stop()
        consumer = factory.get_consumer("kafka", config)
        consumer.register(ssp, "0")
        await consumer.start()
        try:
            got = await poll_until(consumer, [ssp], 4)
        finally:
            await consumer.stop()
        return [(e.key, e.message) for e in got[ssp]], await read_topic(bootstrap, topic + "-raw", 1)

    decoded, raw = asyncio.run(scenario())
    assert decoded == [("k0", {"n": 0}), ("k1", {"n": 1}), ("k2", {"n": 2}), ("gone", None)]
    assert raw == {0: [((7).to_bytes(8, "big"), b"\x00raw")]}


def test_a_message_that_does_not_deserialize_names_its_partition_and_offset(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b'{"ok": 1}', b"not json"])
        consumer = KafkaSystemFactory().get_consumer(
            "kafka", config_for(bootstrap, **{"systems.kafka.samza.msg.serde": "json"})
        )
        consumer.register(ssp, "0")
        await consumer.start()
        try:
            await poll_until(consumer, [ssp], 2)
        finally:
            await consumer.stop()

    with pytest.raises(SystemConsumersError, match=rf"input kafka\.{topic}#0 offset 1: .*not JSON"):
        asyncio.run(scenario())


def test_producer_creates_missing_topics_and_routes_keys_like_kafka(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    config = config_for(
        bootstrap,
        **{f"systems.kafka.streams.{topic}.partitions": "3", "systems.kafka.samza.key.serde": "string"},
    )
    out = SystemStream("kafka", topic)

    async def scenario() -> dict[int, list[tuple[Any, Any]]]:
        producer = KafkaSystemFactory().get_producer("kafka", config)
        await producer.start()
        try:
            for i in range(30):
                producer.send("t", OutgoingMessageEnvelope(out, b"%d" % i, key=f"user-{i % 5}"))
            producer.send("t", OutgoingMessageEnvelope(out, b"pk", key="x", partition_key="user-1"))
            producer.send("t", OutgoingMessageEnvelope(out, b"explicit", partition=2))
            await producer.flush("t")
        finally:
            await producer.stop()
        return await read_topic(bootstrap, topic, 3)

    held = asyncio.run(scenario())
    assert sum(map(len, held.values())) == 32
    for partition, records in held.items():
        for key, value in records:
            if value == b"explicit":
                assert partition == 2
            elif value == b"pk":
                assert partition == (murmur2(b"user-1") & 0x7FFFFFFF) % 3
            else:
                assert partition == (murmur2(key) & 0x7FFFFFFF) % 3


def test_send_from_other_threads_is_delivered(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    out = SystemStream("kafka", topic)

    async def scenario() -> dict[int, list[tuple[Any, Any]]]:
        producer = KafkaSystemFactory().get_producer("kafka", config_for(bootstrap))
        await producer.start()
        try:

            def work(n: int) -> None:
                for i in range(200):
                    producer.send(f"t{n}", OutgoingMessageEnvelope(out, b"%d-%d" % (n, i)))

            threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
            for thread in threads:
                thread.start()

            def join() -> None:
                for thread in threads:
                    thread.join()

            await asyncio.get_running_loop().run_in_executor(None, join)
            await producer.flush("t0")
        finally:
            await producer.stop()
        return await read_topic(bootstrap, topic, 1)

    held = asyncio.run(scenario())
    assert sorted(v for _, v in held[0]) == sorted(b"%d-%d" % (n, i) for n in range(4) for i in range(200))


@pytest.mark.faults
def test_a_failed_delivery_fails_the_flush_and_later_sends(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    out = SystemStream("kafka", topic)

    async def scenario() -> None:
        producer: KafkaSystemProducer = KafkaSystemFactory().get_producer("kafka", config_for(bootstrap))
        await producer.start()
        try:
            producer.send("t", OutgoingMessageEnvelope(out, b"ok"))
            producer.send("t", OutgoingMessageEnvelope(out, b"nowhere", partition=5))  # topic: 1 partition
            with pytest.raises(
                SystemProducerError, match=rf"Kafka topic '{topic}'.*partition 5 does not exist"
            ):
                await producer.flush("t")
            with pytest.raises(SystemProducerError, match="an earlier delivery failed"):
                producer.send("t", OutgoingMessageEnvelope(out, b"after"))
        finally:
            with pytest.raises(SystemProducerError):
                await producer.stop()

    asyncio.run(scenario())


def test_serde_errors_raise_in_send(kafka_broker: DevBroker, topic: str) -> None:
    async def scenario() -> None:
        producer = KafkaSystemFactory().get_producer("kafka", config_for(kafka_broker.bootstrap_servers))
        await producer.start()
        try:
            with pytest.raises(
                SystemProducerError,
                match=r"'text' \(str\) is not bytes: systems\.kafka\.samza\.msg\.serde is not set",
            ):
                producer.send("t", OutgoingMessageEnvelope(SystemStream("kafka", topic), "text"))
            with pytest.raises(SystemProducerError, match="needs a key or a value"):
                producer.send("t", OutgoingMessageEnvelope(SystemStream("kafka", topic), None))
        finally:
            await producer.stop()

    asyncio.run(scenario())


@pytest.mark.faults
def test_an_unknown_input_topic_is_a_clear_error(kafka_broker: DevBroker, topic: str) -> None:
    async def scenario() -> None:
        consumer = KafkaSystemFactory().get_consumer("kafka", config_for(kafka_broker.bootstrap_servers))
        consumer.register(SystemStreamPartition("kafka", topic, 0), "0")
        await consumer.start()

    with pytest.raises(SystemConsumersError, match=rf"Kafka topic '{topic}' does not exist"):
        asyncio.run(scenario())


@pytest.mark.faults
@pytest.mark.parametrize("part", ["consumer", "producer"])
def test_an_unreachable_broker_at_start_fails_within_the_broker_timeout(part: str) -> None:
    address = f"127.0.0.1:{free_port()}"
    config = config_for(address, **{"systems.kafka.samza.broker.timeout.ms": "1500"})

    async def scenario() -> None:
        factory = KafkaSystemFactory()
        if part == "consumer":
            consumer = factory.get_consumer("kafka", config)
            consumer.register(SystemStreamPartition("kafka", "t", 0), "0")
            await consumer.start()
        else:
            await factory.get_producer("kafka", config).start()

    started = time.monotonic()
    error = SystemConsumersError if part == "consumer" else SystemProducerError
    with pytest.raises(error, match=rf"Kafka broker {address} \(system 'kafka'\)"):
        asyncio.run(scenario())
    assert time.monotonic() - started < 10


@pytest.mark.faults
def test_a_frozen_broker_at_start_fails_within_the_broker_timeout(own_kafka_broker: DevBroker) -> None:
    config = config_for(
        own_kafka_broker.bootstrap_servers, **{"systems.kafka.samza.broker.timeout.ms": "1500"}
    )
    own_kafka_broker.pause()
    started = time.monotonic()
    try:
        with pytest.raises(SystemProducerError, match="no answer from Kafka broker .* within 1.5 s"):
            asyncio.run(KafkaSystemFactory().get_producer("kafka", config).start())
    finally:
        own_kafka_broker.resume()
    assert time.monotonic() - started < 10


def test_bad_settings_are_config_errors_naming_the_key() -> None:
    factory = KafkaSystemFactory()
    with pytest.raises(ConfigError, match="missing required config systems.kafka.bootstrap.servers"):
        factory.get_admin("kafka", Config({}))
    with pytest.raises(ConfigError, match="systems.kafka.consumer.fetch.max.wait: 'fetch.max.wait' is not"):
        factory.get_consumer("kafka", config_for("h:1", **{"systems.kafka.consumer.fetch.max.wait": "5"}))
    with pytest.raises(ConfigError, match="systems.kafka.consumer.fetch.max.wait.ms='soon' is not valid"):
        factory.get_consumer(
            "kafka", config_for("h:1", **{"systems.kafka.consumer.fetch.max.wait.ms": "soon"})
        )
    with pytest.raises(ConfigError, match="systems.kafka.producer.value.serializer cannot be set"):
        factory.get_producer("kafka", config_for("h:1", **{"systems.kafka.producer.value.serializer": "x"}))
    with pytest.raises(ConfigError, match="systems.kafka.samza.msg.serde='yaml' is not a serde"):
        factory.get_producer("kafka", config_for("h:1", **{"systems.kafka.samza.msg.serde": "yaml"}))
    settings = KafkaSystemFactory.settings(
        "kafka",
        config_for(
            "h:1",
            **{
                "systems.kafka.consumer.auto.offset.reset": "largest",
                "systems.kafka.consumer.group.id": "ignored",
                "systems.kafka.producer.linger.ms": "7",
                "systems.kafka.producer.acks": "1",
            },
        ),
    )
    assert settings.consumer_settings == {"auto_offset_reset": "latest"}
    # A record batch of up to 1,000,000 bytes per partition (librdkafka's default) unless configured.
    assert settings.producer_settings == {"linger_ms": 7, "acks": 1, "max_batch_size": 1_000_000}
    small = KafkaSystemFactory.settings(
        "kafka", config_for("h:1", **{"systems.kafka.producer.max.batch.size": "16384"})
    )
    assert small.producer_settings["max_batch_size"] == 16384


@pytest.mark.parametrize("reset", ["earliest", "none"])
def test_a_starting_offset_that_does_not_exist_follows_auto_offset_reset(
    kafka_broker: DevBroker, topic: str, reset: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)

    async def scenario() -> list[str]:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"%d" % i for i in range(5)])
        consumer = KafkaSystemFactory().get_consumer(
            "kafka", config_for(bootstrap, **{"systems.kafka.consumer.auto.offset.reset": reset})
        )
        consumer.register(ssp, "1000")
        await consumer.start()
        try:
            got = await poll_until(consumer, [ssp], 5, timeout=10)
        finally:
            await consumer.stop()
        return [e.offset for e in got[ssp]]

    if reset == "earliest":
        assert asyncio.run(scenario()) == ["0", "1", "2", "3", "4"]
    else:
        with pytest.raises(
            SystemConsumersError, match=r"offset 1000 is out of range .*auto.offset.reset is 'none'"
        ):
            asyncio.run(scenario())


def test_the_consumer_reports_the_high_watermark(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)

    async def scenario() -> int | None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"x"] * 30)
        consumer = KafkaSystemFactory().get_consumer("kafka", config_for(bootstrap))
        consumer.register(ssp, "25")
        await consumer.start()
        try:
            await poll_until(consumer, [ssp], 5)
            return consumer.highwater(ssp)
        finally:
            await consumer.stop()

    assert asyncio.run(scenario()) == 30
