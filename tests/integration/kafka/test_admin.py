"""KafkaSystemAdmin against the real broker: metadata matches what the broker holds; topics."""

from __future__ import annotations

import asyncio
import time

import pytest
from aiokafka import AIOKafkaConsumer, TopicPartition

from samza_nb import Config, SamzaError
from samza_nb.api.metadata import SSPMetadata
from samza_nb.runtime.dev_broker import DevBroker, free_port
from samza_nb.systems.kafka import KafkaSystemAdmin, KafkaSystemFactory

from .helpers import create_topic, produce, read_topic


def admin_for(bootstrap: str, **extra: str) -> KafkaSystemAdmin:
    config = Config({"systems.kafka.bootstrap.servers": bootstrap, **extra})
    return KafkaSystemFactory().get_admin("kafka", config)


async def _listed_end(bootstrap: str, topic: str) -> int:
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap)
    await consumer.start()
    try:
        tp = TopicPartition(topic, 0)
        return int((await consumer.end_offsets([tp]))[tp])
    finally:
        await consumer.stop()


def test_metadata_after_batched_produces_is_what_the_broker_holds(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers

    async def scenario() -> tuple[dict[str, dict[int, SSPMetadata]], int, int]:
        await create_topic(bootstrap, topic, 2)
        await produce(bootstrap, topic, [b"a%d" % i for i in range(250)], partition=0)  # a few batches
        await produce(bootstrap, topic, [b"b%d" % i for i in range(7)], partition=1)
        metadata = await admin_for(bootstrap).get_metadata([topic])
        held = await read_topic(bootstrap, topic, 2)
        return metadata, len(held[0]), await _listed_end(bootstrap, topic)

    metadata, held, listed = asyncio.run(scenario())
    assert held == 250
    assert metadata == {topic: {0: SSPMetadata("0", "249", "250"), 1: SSPMetadata("0", "6", "7")}}
    # What the admin does not rely on: this broker's ListOffsets(latest) counts only to the last batch.
    assert listed <= 250


def test_an_empty_topic_has_no_oldest_or_newest(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers

    async def scenario() -> dict[str, dict[int, SSPMetadata]]:
        await create_topic(bootstrap, topic, 1)
        return await admin_for(bootstrap).get_metadata([topic])

    assert asyncio.run(scenario()) == {topic: {0: SSPMetadata(None, None, "0")}}


def test_an_unknown_topic_is_a_clear_error_and_is_not_created(kafka_broker: DevBroker, topic: str) -> None:
    admin = admin_for(kafka_broker.bootstrap_servers)
    with pytest.raises(SamzaError, match=rf"Kafka topic\(s\) '{topic}' of system 'kafka' do not exist"):
        asyncio.run(admin.get_metadata([topic]))
    assert topic not in asyncio.run(admin.partition_counts())


def test_create_stream_is_idempotent_and_changelogs_keep_their_partition_count(
    kafka_broker: DevBroker, topic: str
) -> None:
    admin = admin_for(kafka_broker.bootstrap_servers)

    async def scenario() -> dict[str, int]:
        await admin.create_stream(topic, 3)
        await admin.create_stream(topic, 5)  # exists: left as it is
        await admin.create_changelog_stream(topic + "-changelog", 2)
        await admin.create_changelog_stream(topic + "-changelog", 2)
        with pytest.raises(SamzaError, match="has 2 partitions, not 4"):
            await admin.create_changelog_stream(topic + "-changelog", 4)
        await admin.create_checkpoint_stream(topic + "-checkpoints")
        return await admin.partition_counts()

    counts = asyncio.run(scenario())
    assert counts[topic] == 3 and counts[topic + "-changelog"] == 2 and counts[topic + "-checkpoints"] == 1


def test_illegal_topic_names_are_refused(kafka_broker: DevBroker) -> None:
    admin = admin_for(kafka_broker.bootstrap_servers)
    with pytest.raises(SamzaError, match="not a legal Kafka topic name"):
        asyncio.run(admin.create_stream("no spaces", 1))


def test_offsets_compare_as_integers() -> None:
    admin = admin_for("127.0.0.1:1")
    assert admin.offset_comparator("2", "10") < 0
    assert admin.offset_comparator("10", "10") == 0
    assert admin.offset_after("9") == "10"
    with pytest.raises(SamzaError, match="not a Kafka offset"):
        admin.offset_after("x")


@pytest.mark.faults
def test_an_unreachable_broker_fails_within_the_broker_timeout() -> None:
    admin = admin_for(f"127.0.0.1:{free_port()}", **{"systems.kafka.samza.broker.timeout.ms": "1500"})
    started = time.monotonic()
    with pytest.raises(SamzaError, match=r"Kafka broker 127\.0\.0\.1:\d+ \(system 'kafka'\)"):
        asyncio.run(admin.get_metadata(["anything"]))
    assert time.monotonic() - started < 10
