"""A 4-partition Kafka job with job.container.count = 2 run by the CLI as a coordinator and two processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

from samza_nb import Config, SystemStreamPartition
from samza_nb.runtime.dev_broker import DevBroker, free_port
from samza_nb.runtime.local import read_checkpoints
from tests.eventually import eventually

from .helpers import create_topic, kafka_config, produce, read_topic, write_properties

ROOT = Path(__file__).parents[3]
TASKS = [f"Partition {p}" for p in range(4)]

FORWARD_TASK = """
import os

from samza_nb import OutgoingMessageEnvelope, SystemStream


class Forward:
    \"\"\"Copies each message to the same partition of test.output; logs task, pid and message.\"\"\"

    def init(self, context):
        self.out = SystemStream("kafka", context.config.get_str("test.output"))
        self.task = context.task_name.replace(" ", "_")
        self.log = open("processed.log", "a")

    def process(self, envelope, collector, coordinator):
        partition = envelope.ssp.partition
        collector.send(OutgoingMessageEnvelope(self.out, envelope.message, partition=partition))
        self.log.write(f"{self.task} {os.getpid()} {envelope.message}\\n")
        self.log.flush()

    def close(self):
        self.log.close()
"""


def cli(workdir: Path, *args: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress", *args],
        cwd=workdir,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def try_get(url: str) -> Any:
    try:
        return get(url)
    except OSError:
        return None


def listening_addresses(port: int) -> set[str]:
    """Local addresses of the sockets listening on ``port`` (Linux /proc/net/tcp, hex little-endian)."""
    found = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        local, state = line.split()[1], line.split()[3]
        address, hex_port = local.split(":")
        if int(hex_port, 16) == port and state == "0A":
            found.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
    return found


def coordinator_messages(bootstrap: str, job: str) -> list[tuple[list[Any], Any]]:
    held = asyncio.run(read_topic(bootstrap, f"__samza_coordinator_{job}_1", 1))
    return [(json.loads(key), json.loads(value) if value else None) for key, value in held[0]]


def test_two_container_processes_share_a_four_partition_kafka_job(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    source, sink = topic, topic + "-out"
    port = free_port()
    config = kafka_config(
        bootstrap,
        **{
            "job.name": topic,
            "task.class": "forward.Forward",
            "task.inputs": f"kafka.{source}",
            "test.output": sink,
            f"systems.kafka.streams.{sink}.partitions": "4",
            "systems.kafka.samza.msg.serde": "string",
            "job.container.count": "2",
            "job.coordinator.system": "kafka",
            "cluster-manager.jobcoordinator.url.port": str(port),
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "job.logged.store.base.dir": str(tmp_path / "state"),
            "task.commit.ms": "500",
        },
    )
    (tmp_path / "forward.py").write_text(FORWARD_TASK)
    write_properties(tmp_path / "job.properties", config)

    def add(start: int, stop: int) -> None:
        async def go() -> None:
            for partition in range(4):
                values = [f"p{partition}-{i}".encode() for i in range(start, stop)]
                await produce(bootstrap, source, values, partition=partition)

        asyncio.run(go())

    asyncio.run(create_topic(bootstrap, source, 4))
    add(0, 40)

    # First run: unbounded input; watch it over HTTP, then SIGTERM it (each container commits).
    run = cli(tmp_path)
    url = f"http://127.0.0.1:{port}"
    model = eventually(lambda: try_get(url + "/"), timeout=60, message="GET / while the job runs")
    assert {cid: sorted(c["tasks"]) for cid, c in model["containers"].items()} == {
        "0": ["Partition 0", "Partition 2"],
        "1": ["Partition 1", "Partition 3"],
    }
    assert model["config"]["task.inputs"] == f"kafka.{source}"
    assert listening_addresses(port) == {"127.0.0.1"}
    eventually(lambda: get(url + "/status")["processed"] >= 160, timeout=60, message="160 processed")
    status = get(url + "/status")
    assert {cid: len(c["tasks"]) for cid, c in status["containers"].items()} == {"0": 2, "1": 2}
    assert len({c["pid"] for c in status["containers"].values()}) == 2
    assert set(get(url + "/locality")) == {"0", "1"}
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert "interrupted; stopped gracefully" in err

    rows = [line.split(" ") for line in (tmp_path / "processed.log").read_text().splitlines()]
    assert Counter(message for _, _, message in rows) == Counter(
        f"p{p}-{i}" for p in range(4) for i in range(40)
    ), "every message processed exactly once"
    pids = {task: {pid for t, pid, _ in rows if t == task} for task, _, _ in rows}
    assert pids["Partition_0"] == pids["Partition_2"] != pids["Partition_1"] == pids["Partition_3"]
    held = asyncio.run(read_topic(bootstrap, sink, 4))
    for partition in range(4):
        assert [value for _, value in held[partition]] == [f"p{partition}-{i}".encode() for i in range(40)]
    offsets = asyncio.run(read_checkpoints(Config(config), TASKS))
    assert offsets == {f"Partition {p}": {SystemStreamPartition("kafka", source, p): "39"} for p in range(4)}

    messages = coordinator_messages(bootstrap, topic)
    changelog = {key[2]: value["values"]["Partition"] for key, value in messages if key[1] == "set-changelog"}
    assert changelog == {f"Partition {p}": str(p) for p in range(4)}
    assert all(key[0] == 1 for key, _ in messages)

    # Second run, same config: resumes from the checkpoints, keeps the mapping (no new set-changelog).
    add(40, 50)
    (tmp_path / "processed.log").unlink()
    second = cli(tmp_path, "--max-messages", "40")
    out, err = second.communicate(timeout=90)
    assert second.returncode == 0, err
    assert all(f"kafka.{source}#{p}=49" in out for p in range(4)), out
    assert sorted(
        m for _, _, m in (line.split(" ") for line in (tmp_path / "processed.log").read_text().splitlines())
    ) == sorted(f"p{p}-{i}" for p in range(4) for i in range(40, 50))
    again = coordinator_messages(bootstrap, topic)
    assert [m for m in again if m[0][1] == "set-changelog"] == [
        m for m in messages if m[0][1] == "set-changelog"
    ]

    # A partition-count change of this stateful job is refused, naming what changed; nothing runs.
    wider = topic + "-8"
    asyncio.run(create_topic(bootstrap, wider, 8))
    write_properties(tmp_path / "job.properties", {**config, "task.inputs": f"kafka.{wider}"})
    refused = cli(tmp_path)
    _, err = refused.communicate(timeout=90)
    assert refused.returncode == 2
    line = err.strip().splitlines()[-1]
    assert line.startswith("samza-nb: error: the input partition count changed"), err
    assert f"kafka.{wider}: 8 partitions" in line and "stores: counts" in line
