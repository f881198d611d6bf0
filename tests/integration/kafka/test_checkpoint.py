"""KafkaCheckpointManager against the real broker."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from samza_nb import Config, SystemStreamPartition
from samza_nb.checkpoint import Checkpoint, load_checkpoint_manager
from samza_nb.checkpoint.kafka import KafkaCheckpointManager, checkpoint_topic
from samza_nb.checkpoint.samza_serdes import CheckpointKey
from samza_nb.errors import CheckpointError, ConfigError
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.kafka import KafkaSystemFactory

from .helpers import kafka_config, produce, read_topic

GBP = "org.apache.samza.container.grouper.stream.GroupByPartitionFactory"
COUNTS = SystemStreamPartition("kafka", "counts-changelog", 1)


def job_config(bootstrap: str, job: str, **extra: str) -> Config:
    stores = {
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.changelog": "kafka.counts-changelog",
    }
    return Config(kafka_config(bootstrap, **{"job.name": job, **stores, **extra}))


def encode_key(task: str, grouper: str = GBP) -> bytes:
    return CheckpointKey("checkpoint", task, grouper).encode()


def manager(config: Config, *tasks: str) -> KafkaCheckpointManager:
    result = load_checkpoint_manager(config)
    assert isinstance(result, KafkaCheckpointManager)
    for task in tasks:
        result.register(task)
    return result


def test_topic_name_follows_samza() -> None:
    assert checkpoint_topic("page_views", "my_id") == "__samza_checkpoint_ver_1_for_page-views_my-id"


def test_checkpoints_survive_managers_and_the_last_write_per_task_wins(kafka_broker: DevBroker) -> None:
    job = f"job_{uuid.uuid4().hex[:6]}"
    config = job_config(kafka_broker.bootstrap_servers, job, **{"job.id": "7"})
    a, b = SystemStreamPartition("kafka", "in", 0), SystemStreamPartition("kafka", "in", 1)

    async def scenario() -> tuple[Checkpoint | None, Checkpoint | None, Checkpoint | None]:
        first = manager(config, "Partition 0", "Partition 1")
        await first.start()
        assert await first.read_last_checkpoint("Partition 0") is None
        await first.write_checkpoint("Partition 0", Checkpoint({a: "3"}))
        await first.write_checkpoint(
            "Partition 1", Checkpoint({b: "9"}, {"counts": "41"}, {"counts": COUNTS})
        )
        await first.write_checkpoint("Partition 0", Checkpoint({a: "12"}))
        assert await first.read_last_checkpoint("Partition 0") == Checkpoint({a: "12"})
        await first.stop()
        second = manager(config, "Partition 0", "Partition 1")
        await second.start()
        try:
            return (
                await second.read_last_checkpoint("Partition 0"),
                await second.read_last_checkpoint("Partition 1"),
                await second.read_last_checkpoint("Partition 9"),
            )
        finally:
            await second.stop()

    p0, p1, p9 = asyncio.run(scenario())
    assert p0 == Checkpoint({a: "12"})
    assert p1 == Checkpoint({b: "9"}, {"counts": "41"})
    assert p9 is None
    topic = checkpoint_topic(job, "7")
    held = asyncio.run(read_topic(kafka_broker.bootstrap_servers, topic, 1))[0]
    assert len(held) == 6  # per checkpoint written, a v1 and a v2 message (task.checkpoint.write.versions)
    key, value = held[-2]
    assert json.loads(held[-1][0])["type"] == "checkpoint-v2"
    assert json.loads(key) == {
        "systemstreampartition-grouper-factory": GBP,
        "taskName": "Partition 0",
        "type": "checkpoint",
    }
    assert json.loads(value) == {
        "SystemStreamPartition [kafka, in, 0]": {
            "system": "kafka",
            "stream": "in",
            "partition": "0",
            "offset": "12",
        }
    }
    counts = asyncio.run(KafkaSystemFactory().get_admin("kafka", config).partition_counts())
    assert counts[topic] == 1


def test_tombstones_and_other_groupers_and_foreign_keys(kafka_broker: DevBroker) -> None:
    job = f"job-{uuid.uuid4().hex[:6]}"
    bootstrap = kafka_broker.bootstrap_servers
    config = job_config(bootstrap, job)
    topic = checkpoint_topic(job, "1")
    a = SystemStreamPartition("kafka", "in", 0)

    async def scenario() -> tuple[Checkpoint | None, Checkpoint | None]:
        first = manager(config, "Partition 0", "Partition 1")
        await first.start()
        await first.write_checkpoint("Partition 0", Checkpoint({a: "1"}))
        await first.write_checkpoint("Partition 1", Checkpoint({a: "2"}))
        await first.stop()
        other = manager(
            job_config(bootstrap, job, **{"job.systemstreampartition.grouper.factory": "group-by-ssp"}),
            "Partition 0",
        )
        await other.start()
        await other.write_checkpoint("Partition 0", Checkpoint({a: "99"}))
        await other.stop()
        tombstone_key = encode_key("Partition 1")
        await produce(bootstrap, topic, [None, b"ignored"], keys=[tombstone_key, b"not json"])
        again = manager(config, "Partition 0", "Partition 1")
        await again.start()
        try:
            return await again.read_last_checkpoint("Partition 0"), await again.read_last_checkpoint(
                "Partition 1"
            )
        finally:
            await again.stop()

    p0, p1 = asyncio.run(scenario())
    assert p0 == Checkpoint({a: "1"})
    assert p1 is None


def test_use_outside_the_lifecycle_is_an_error(kafka_broker: DevBroker) -> None:
    config = job_config(kafka_broker.bootstrap_servers, f"job-{uuid.uuid4().hex[:6]}")

    async def scenario() -> None:
        m = manager(config, "Partition 0")
        with pytest.raises(CheckpointError, match="start it first"):
            await m.read_last_checkpoint("Partition 0")
        await m.start()
        await m.stop()
        with pytest.raises(CheckpointError, match="start it first"):
            await m.write_checkpoint("Partition 0", Checkpoint({}))

    asyncio.run(scenario())


def test_config_errors() -> None:
    base = {"systems.kafka.samza.factory": "samza_nb.systems.kafka.KafkaSystemFactory"}
    factory_key = {"task.checkpoint.factory": "samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory"}
    with pytest.raises(ConfigError, match="missing required config task.checkpoint.system"):
        load_checkpoint_manager(Config({**base, **factory_key}))
    mem = {"systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory"}
    with pytest.raises(ConfigError, match="Kafka checkpoints need a Kafka system"):
        load_checkpoint_manager(Config({**mem, **factory_key, "task.checkpoint.system": "mem"}))
    with pytest.raises(ConfigError, match="systems.kafka.bootstrap.servers"):
        load_checkpoint_manager(Config({**base, **factory_key, "job.default.system": "kafka"}))
    with pytest.raises(ConfigError, match="illegal checkpoint topic"):
        load_checkpoint_manager(
            Config(
                {
                    **base,
                    **factory_key,
                    "job.default.system": "kafka",
                    "job.name": "a b",
                    "systems.kafka.bootstrap.servers": "h:1",
                }
            )
        )
