"""The coordinator stream on the real broker: CoordinatorStreamStore and the writer CLI."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from samza_nb import Config
from samza_nb.coordinator import CoordinatorStreamMessage, CoordinatorStreamStore, coordinator_stream_name
from samza_nb.coordinator.messages import SET_CONFIG
from samza_nb.runtime.cli.main import main
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.systems.kafka.admin import KafkaSystemAdmin
from samza_nb.systems.kafka.config import KafkaSystemConfig

from .helpers import kafka_config, produce, read_topic, write_properties

Msg = CoordinatorStreamMessage


def job_config(bootstrap: str, **extra: str) -> tuple[Config, str]:
    job = f"job_{uuid.uuid4().hex[:6]}"
    config = Config(kafka_config(bootstrap, **{"job.name": job, "job.default.system": "kafka", **extra}))
    return config, coordinator_stream_name(job)


def test_the_store_bootstraps_every_message_written_in_batches(kafka_broker: DevBroker) -> None:
    # A system-wide serde must not touch the coordinator stream's bytes.
    config, stream = job_config(
        kafka_broker.bootstrap_servers,
        **{"systems.kafka.samza.msg.serde": "json", "systems.kafka.samza.key.serde": "string"},
    )
    sent = [Msg.set_config(f"key.{n}", f"value {n}", "test") for n in range(300)]

    async def scenario() -> tuple[CoordinatorStreamStore, dict[int, list[tuple[bytes, bytes]]], int]:
        first = CoordinatorStreamStore(config)
        await first.start()
        for start in range(0, 300, 100):
            await first.send(sent[start : start + 100])
        await first.send(
            [Msg.set_config("key.0", "changed", "test"), Msg.delete(SET_CONFIG, "key.1", "test")]
        )
        await first.send(
            [Msg.set_changelog("Partition 0", 0, "test"), Msg.set_changelog("Partition 1", 1, "test")]
        )
        await first.stop()
        second = CoordinatorStreamStore(config)
        await second.start()
        await second.stop()  # the views stay
        raw = await read_topic(kafka_broker.bootstrap_servers, stream, 1)
        settings = KafkaSystemConfig.from_config("kafka", config)
        partitions = (await KafkaSystemAdmin(settings).partition_counts())[stream]
        return second, raw, partitions

    store, raw, partitions = asyncio.run(scenario())
    assert partitions == 1
    expected = {f"key.{n}": f"value {n}" for n in range(2, 300)} | {"key.0": "changed"}
    assert store.config() == expected
    assert list(store.config())[-1] == "key.0"
    assert store.changelog_mapping() == {"Partition 0": 0, "Partition 1": 1}
    assert raw[0][:300] == [m.encode() for m in sent]
    assert raw[0][301] == (b'[1,"set-config","key.1"]', None)


def test_catch_up_sees_messages_written_by_another_producer(kafka_broker: DevBroker) -> None:
    config, stream = job_config(kafka_broker.bootstrap_servers)

    async def scenario() -> tuple[dict[str, str], dict[str, str]]:
        store = CoordinatorStreamStore(config)
        await store.start()
        try:
            before = store.config()
            messages = [Msg.set_config("job.container.count", str(n), "other") for n in range(1, 51)]
            encoded = [m.encode() for m in messages]
            await produce(
                kafka_broker.bootstrap_servers, stream, [v for _, v in encoded], keys=[k for k, _ in encoded]
            )
            await store.catch_up()
            return before, store.config()
        finally:
            await store.stop()

    before, after = asyncio.run(scenario())
    assert before == {}
    assert after == {"job.container.count": "50"}


def test_the_writer_cli_writes_to_kafka(
    kafka_broker: DevBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, stream = job_config(kafka_broker.bootstrap_servers)
    path = tmp_path / "job.properties"
    write_properties(path, dict(config))
    write = ["coordinator-stream-writer", "--config-path", str(path), "--type", "set-config"]
    assert main([*write, "--key", "job.container.count", "--value", "8"]) == 0
    assert main([*write, "--key", "job.container.count", "--value", "4"]) == 0
    assert main([*write[:-1], "set-changelog", "--key", "Partition 0", "--value", "1"]) == 2
    assert "only writes set-config" in capsys.readouterr().err

    async def scenario() -> tuple[dict[str, str], list[tuple[bytes, bytes]]]:
        store = CoordinatorStreamStore(config)
        await store.start()
        await store.stop()
        return store.config(), (await read_topic(kafka_broker.bootstrap_servers, stream, 1))[0]

    written, raw = asyncio.run(scenario())
    assert written == {"job.container.count": "4"}
    assert len(raw) == 2
    assert json.loads(raw[0][0]) == [1, "set-config", "job.container.count"]
    assert json.loads(raw[0][1])["source"] == "coordinator-stream-writer"
