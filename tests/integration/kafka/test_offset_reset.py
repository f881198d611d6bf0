"""A checkpoint past the end of a recreated topic: the consumer resets per auto.offset.reset and the job
processes every message from the new position, writes its next checkpoint from there and reports the reset."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from aiokafka.admin import AIOKafkaAdminClient

from samza_nb import Config, SamzaError, SystemStreamPartition
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import LocalJobRunner, read_checkpoints
from tests.eventually import aeventually

from .helpers import create_topic, kafka_config, produce


class Seen:
    """Records (partition, offset) of every message, in processing order."""

    seen: ClassVar[list[tuple[int, int]]] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Seen.seen.append((envelope.ssp.partition, int(envelope.offset)))


async def recreate(bootstrap: str, topic: str, partitions: int) -> None:
    """Delete ``topic`` and create it anew, empty."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.delete_topics([topic])

        async def gone() -> bool:
            return topic not in await admin.list_topics()

        await aeventually(gone, timeout=20, message=f"deleting {topic}")
    finally:
        await admin.close()
    await create_topic(bootstrap, topic, partitions)


def _config(bootstrap: str, topic: str, **extra: str) -> Config:
    return Config(
        kafka_config(
            bootstrap,
            **{"job.name": topic, "task.inputs": f"kafka.{topic}", "task.commit.ms": "100", **extra},
        )
    )


def _run(config: Config, count: int) -> LocalJobRunner:
    Seen.seen = []
    runner = LocalJobRunner(config, Seen, max_messages=count)
    runner.run(timeout=60)
    return runner


def _checkpoint_past_the_end(bootstrap: str, topic: str) -> None:
    """Checkpoints at offset 30 of both partitions, then the topic recreated with 10 messages each."""

    async def fill(count: int) -> None:
        for partition in (0, 1):
            await produce(bootstrap, topic, [b"m%d" % i for i in range(count)], partition=partition)

    asyncio.run(create_topic(bootstrap, topic, 2))
    asyncio.run(fill(31))
    _run(_config(bootstrap, topic), 62)
    assert sorted(Seen.seen) == [(p, i) for p in (0, 1) for i in range(31)]
    asyncio.run(recreate(bootstrap, topic, 2))
    asyncio.run(fill(10))


def test_a_checkpoint_past_the_end_of_a_recreated_topic_reads_every_message_from_the_reset(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    _checkpoint_past_the_end(bootstrap, topic)
    config = _config(bootstrap, topic)

    runner = _run(config, 20)

    assert sorted(Seen.seen) == [(p, i) for p in (0, 1) for i in range(10)]
    ssps = [SystemStreamPartition("kafka", topic, p) for p in (0, 1)]
    tasks = ["Partition 0", "Partition 1"]
    written = asyncio.run(read_checkpoints(config, tasks))
    assert {ssp: offset for offsets in written.values() for ssp, offset in offsets.items()} == {
        ssp: "9" for ssp in ssps
    }
    assert runner.container is not None
    resets = runner.container.status().resets
    assert sorted((r.ssp, r.from_offset, r.to_offset) for r in resets) == [(ssp, "31", "0") for ssp in ssps]
    assert "auto.offset.reset=earliest" in resets[0].describe()

    # Restarted, it resumes after what it processed: no reset, nothing again.
    asyncio.run(produce(bootstrap, topic, [b"n"] * 3, partition=0))
    runner = _run(config, 3)
    assert Seen.seen == [(0, 10), (0, 11), (0, 12)]
    assert runner.container is not None and runner.container.status().resets == ()


def test_a_reset_to_latest_reads_what_comes_after_it(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    _checkpoint_past_the_end(bootstrap, topic)
    config = _config(bootstrap, topic, **{"systems.kafka.consumer.auto.offset.reset": "latest"})
    Seen.seen = []
    runner = LocalJobRunner(config, Seen, max_messages=4)

    async def scenario() -> None:
        job = asyncio.create_task(runner.run_async(timeout=60))

        async def both_reset() -> bool:
            assert not job.done()
            return runner.container is not None and len(runner.container.status().resets) == 2

        await aeventually(both_reset, timeout=30, message="resets of both partitions")
        for partition in (0, 1):
            await produce(bootstrap, topic, [b"late"] * 2, partition=partition)
        await job

    asyncio.run(scenario())
    assert sorted(Seen.seen) == [(p, i) for p in (0, 1) for i in (10, 11)]


def test_without_a_reset_policy_a_checkpoint_past_the_end_fails_in_one_line(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    _checkpoint_past_the_end(bootstrap, topic)
    config = _config(bootstrap, topic, **{"systems.kafka.consumer.auto.offset.reset": "none"})
    with pytest.raises(
        SamzaError, match=rf"kafka\.{topic}#\d: offset 31 is out of range .*past the partition's end"
    ):
        _run(config, 20)


def test_a_topic_recreated_while_the_job_runs_is_read_from_its_oldest_message(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    asyncio.run(create_topic(bootstrap, topic, 1))
    asyncio.run(produce(bootstrap, topic, [b"old"] * 31))
    config = _config(bootstrap, topic, **{"systems.kafka.samza.broker.timeout.ms": "20000"})
    Seen.seen = []
    runner = LocalJobRunner(config, Seen, max_messages=41)

    async def scenario() -> None:
        job = asyncio.create_task(runner.run_async(timeout=60))
        await aeventually(lambda: len(Seen.seen) == 31 or job.done(), timeout=30, message="the old messages")
        await recreate(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"new"] * 10)
        await job

    asyncio.run(scenario())
    assert Seen.seen == [(0, i) for i in range(31)] + [(0, i) for i in range(10)]
    assert runner.container is not None
    (reset,) = runner.container.status().resets
    assert (reset.from_offset, reset.to_offset) == ("31", "0")
    written = asyncio.run(read_checkpoints(config, ["Partition 0"]))["Partition 0"]
    assert written == {SystemStreamPartition("kafka", topic, 0): "9"}
