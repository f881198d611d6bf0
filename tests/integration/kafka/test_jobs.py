"""Whole jobs on Kafka: the CLI job resumes from its Kafka checkpoint; bootstrap streams go first."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, ClassVar

import pytest

from samza_nb import Config, SamzaError, SystemStreamPartition
from samza_nb.checkpoint import load_checkpoint_manager
from samza_nb.runtime.dev_broker import DevBroker, free_port
from samza_nb.runtime.local import LocalJobRunner

from .helpers import create_topic, kafka_config, produce, read_topic, write_properties

FORWARD_TASK = """
from samza_nb import OutgoingMessageEnvelope, SystemStream


class Forward:
    \"\"\"Copies each message to the same partition of test.output; logs what it processed.\"\"\"

    def init(self, context):
        self.out = SystemStream("kafka", context.config.get_str("test.output"))
        self.log = open("processed.log", "a")

    def process(self, envelope, collector, coordinator):
        message, partition = envelope.message, envelope.ssp.partition
        collector.send(OutgoingMessageEnvelope(self.out, message, key=envelope.key, partition=partition))
        self.log.write(f"{envelope.ssp.partition} {envelope.offset} {envelope.message}\\n")
        self.log.flush()

    def close(self):
        self.log.close()
"""


def run_cli(workdir: Path, max_messages: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "samza_nb",
            "run",
            "--config-path",
            "job.properties",
            "--no-progress",
            "--max-messages",
            str(max_messages),
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=90,
    )


def processed(workdir: Path) -> list[tuple[int, int, str]]:
    lines = (workdir / "processed.log").read_text().splitlines()
    return [(int(p), int(o), m) for p, o, m in (line.split(" ", 2) for line in lines)]


async def checkpoints(config: Config) -> dict[str, dict[SystemStreamPartition, str]]:
    manager = load_checkpoint_manager(config)
    for task in ("Partition 0", "Partition 1"):
        manager.register(task)
    await manager.start()
    try:
        result = {}
        for task in ("Partition 0", "Partition 1"):
            checkpoint = await manager.read_last_checkpoint(task)
            result[task] = dict(checkpoint.offsets) if checkpoint else {}
        return result
    finally:
        await manager.stop()


def test_cli_job_reads_two_partitions_writes_a_topic_and_resumes_from_its_kafka_checkpoint(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    source, sink = topic, topic + "-out"
    config = kafka_config(
        bootstrap,
        **{
            "job.name": topic,
            "task.class": "forward.Forward",
            "task.inputs": f"kafka.{source}",
            "test.output": sink,
            f"systems.kafka.streams.{sink}.partitions": "2",
            "systems.kafka.samza.msg.serde": "string",
        },
    )
    (tmp_path / "forward.py").write_text(FORWARD_TASK)
    write_properties(tmp_path / "job.properties", config)

    def add(start: int, stop: int) -> None:
        async def go() -> None:
            for partition in (0, 1):
                values = [f"p{partition}-{i}".encode() for i in range(start, stop)]
                await produce(bootstrap, source, values, partition=partition)

        asyncio.run(go())

    asyncio.run(create_topic(bootstrap, source, 2))
    add(0, 40)
    first = run_cli(tmp_path, 80)
    assert first.returncode == 0, first.stderr
    assert sorted(processed(tmp_path)) == sorted((p, i, f"p{p}-{i}") for p in (0, 1) for i in range(40))
    assert "stopped after --max-messages 80" in first.stderr
    assert f"kafka.{source}#0=39" in first.stdout and f"kafka.{source}#1=39" in first.stdout

    add(40, 50)
    (tmp_path / "processed.log").unlink()
    second = run_cli(tmp_path, 20)
    assert second.returncode == 0, second.stderr
    assert sorted(processed(tmp_path)) == sorted((p, i, f"p{p}-{i}") for p in (0, 1) for i in range(40, 50))

    held = asyncio.run(read_topic(bootstrap, sink, 2))
    for partition in (0, 1):
        assert [value for _, value in held[partition]] == [f"p{partition}-{i}".encode() for i in range(50)]
    offsets = asyncio.run(checkpoints(Config(config)))
    assert offsets == {
        "Partition 0": {SystemStreamPartition("kafka", source, 0): "49"},
        "Partition 1": {SystemStreamPartition("kafka", source, 1): "49"},
    }


class Recorder:
    """Records the stream and offset of every message, in processing order."""

    seen: ClassVar[list[tuple[str, int, str]]] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Recorder.seen.append((envelope.ssp.stream, envelope.ssp.partition, envelope.offset))


def test_a_bootstrap_stream_on_kafka_is_consumed_to_its_head_first(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    boot, events = topic + "-boot", topic + "-events"

    async def prepare() -> None:
        await create_topic(bootstrap, boot, 1)
        await create_topic(bootstrap, events, 2)
        await produce(bootstrap, events, [b"e"] * 100, partition=0)
        await produce(bootstrap, events, [b"e"] * 100, partition=1)
        for chunk in range(3):  # batched produces: ListOffsets would undercount the head
            await produce(bootstrap, boot, [b"b%d" % (chunk * 100 + i) for i in range(100)], partition=0)

    asyncio.run(prepare())
    config = Config(
        kafka_config(
            bootstrap,
            **{
                "job.name": topic,
                "task.inputs": f"kafka.{events},kafka.{boot}",
                f"systems.kafka.streams.{boot}.samza.bootstrap": "true",
                "job.systemstreampartition.grouper.factory": "group-by-ssp",
            },
        )
    )
    Recorder.seen = []
    LocalJobRunner(config, Recorder, max_messages=500).run(timeout=60)
    seen = Recorder.seen
    assert len(seen) >= 500
    boot_positions = [i for i, (stream, _, _) in enumerate(seen) if stream == boot]
    event_positions = [i for i, (stream, _, _) in enumerate(seen) if stream == events]
    assert len(boot_positions) == 300 and len(event_positions) >= 200
    assert max(boot_positions) < min(event_positions), "an event was processed before the bootstrap head"
    assert [offset for stream, _, offset in seen if stream == boot] == [str(i) for i in range(300)]


@pytest.mark.faults
def test_a_job_whose_input_topic_does_not_exist_fails_naming_it(kafka_broker: DevBroker, topic: str) -> None:
    config = Config(
        kafka_config(kafka_broker.bootstrap_servers, **{"job.name": topic, "task.inputs": f"kafka.{topic}"})
    )
    with pytest.raises(SamzaError, match=rf"Kafka topic\(s\) '{topic}' of system 'kafka' do not exist"):
        LocalJobRunner(config, Recorder).run(timeout=30)


@pytest.mark.faults
def test_a_job_whose_broker_is_unreachable_fails_within_the_broker_timeout() -> None:
    address = f"127.0.0.1:{free_port()}"
    config = Config(
        kafka_config(
            address, **{"task.inputs": "kafka.anything", "systems.kafka.samza.broker.timeout.ms": "1500"}
        )
    )
    started = time.monotonic()
    with pytest.raises(SamzaError, match=rf"Kafka broker {address} \(system 'kafka'\)"):
        LocalJobRunner(config, Recorder).run(timeout=30)
    assert time.monotonic() - started < 10
