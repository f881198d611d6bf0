"""Losing the broker mid-run: a clear error naming it within a bounded time; a restart once it is back
loses nothing (at-least-once).

Each test has its own broker. The broker keeps its topics in memory, so a killed broker comes back empty;
to bring a broker back *with its data*, the second test puts a TCP forwarder between the job and the broker
and kills that instead: to the job's clients this is exactly a broker process dying (connections reset, new
ones refused) and coming back.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from samza_nb import Config, SystemStreamPartition
from samza_nb.errors import SystemConsumersError
from samza_nb.runtime.dev_broker import DevBroker, free_port
from samza_nb.runtime.local import LocalJobRunner, read_checkpoints
from tests.eventually import eventually

from .helpers import Forwarder, create_topic, kafka_config, produce, read_topic, write_properties

TASK = """
import time

from samza_nb import OutgoingMessageEnvelope, RequestScope, SystemStream


class Forward:
    \"\"\"Copies each message to test.output (slowly); stops the job at the message STOP.\"\"\"

    def init(self, context):
        self.out = SystemStream("kafka", context.config.get_str("test.output"))
        self.delay = float(context.config.get_str("test.delay.s", "0"))
        self.log = open("processed.log", "a")

    def process(self, envelope, collector, coordinator):
        time.sleep(self.delay)
        collector.send(OutgoingMessageEnvelope(self.out, envelope.message))
        self.log.write(envelope.offset + "\\n")
        self.log.flush()
        if envelope.message == b"STOP":
            coordinator.commit(RequestScope.CURRENT_TASK)
            coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)

    def close(self):
        self.log.close()
"""

MESSAGES = 1500
BROKER_TIMEOUT_MS = 2000


def start_job(workdir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def processed(workdir: Path) -> list[int]:
    path = workdir / "processed.log"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def wait_for_progress(workdir: Path, job: subprocess.Popen[str], count: int) -> None:
    def progressed() -> bool:
        assert job.poll() is None, f"the job ended early: {job.communicate()}"
        return len(processed(workdir)) >= count

    eventually(progressed, timeout=60, message=f"the job processing {count} messages")


def prepare(bootstrap: str, topic: str, workdir: Path) -> dict[str, str]:
    async def go() -> None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"%d" % i for i in range(MESSAGES)] + [b"STOP"])

    asyncio.run(go())
    config = kafka_config(
        bootstrap,
        **{
            "job.name": topic,
            "task.class": "forward.Forward",
            "task.inputs": f"kafka.{topic}",
            "task.commit.ms": "200",
            "test.output": topic + "-out",
            "test.delay.s": "0.002",
            "systems.kafka.samza.broker.timeout.ms": str(BROKER_TIMEOUT_MS),
        },
    )
    (workdir / "forward.py").write_text(TASK)
    write_properties(workdir / "job.properties", config)
    return config


@pytest.mark.faults
def test_the_broker_killed_mid_run_is_a_clear_error(
    own_kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = own_kafka_broker.bootstrap_servers
    prepare(bootstrap, topic, tmp_path)
    job = start_job(tmp_path)
    try:
        wait_for_progress(tmp_path, job, 200)
        own_kafka_broker.kill()
        killed = time.monotonic()
        _, stderr = job.communicate(timeout=60)
        elapsed = time.monotonic() - killed
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()
    assert job.returncode == 1, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("samza-nb: error:")]
    assert len(errors) == 1 and f"Kafka broker {bootstrap} (system 'kafka')" in errors[0], stderr
    assert elapsed < 8 * BROKER_TIMEOUT_MS / 1000, f"the error took {elapsed:.1f} s"


@pytest.fixture
def forwarded_broker(request: pytest.FixtureRequest) -> Iterator[tuple[DevBroker, Forwarder]]:
    """A broker that clients reach (bootstrap and advertised address) only through a forwarder."""
    port = free_port()
    broker = DevBroker(advertised_port=port)
    request.addfinalizer(broker.stop)
    broker.start()
    forwarder = Forwarder(port, broker.port).start()
    try:
        yield broker, forwarder
    finally:
        forwarder.kill()


@pytest.mark.faults
def test_a_restart_after_the_broker_came_back_loses_nothing(
    forwarded_broker: tuple[DevBroker, Forwarder], topic: str, tmp_path: Path
) -> None:
    broker, forwarder = forwarded_broker
    bootstrap = broker.bootstrap_servers
    config = prepare(bootstrap, topic, tmp_path)

    job = start_job(tmp_path)
    try:
        wait_for_progress(tmp_path, job, 300)
        forwarder.kill()  # the broker is gone, as far as the job can tell
        _, stderr = job.communicate(timeout=60)
    finally:
        if job.poll() is None:
            job.kill()
            job.communicate()
    assert job.returncode == 1, stderr
    assert f"Kafka broker {bootstrap} (system 'kafka')" in stderr, stderr
    first_run = processed(tmp_path)
    (tmp_path / "processed.log").unlink()

    forwarder.start()  # the broker is back, with everything it held
    second = subprocess.run(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert second.returncode == 0, second.stderr
    second_run = processed(tmp_path)
    assert 0 < second_run[0] <= first_run[-1] + 1, "the restart did not resume from the Kafka checkpoint"
    assert second_run == list(range(second_run[0], MESSAGES + 1))

    expected = [b"%d" % i for i in range(MESSAGES)] + [b"STOP"]
    written = [value for _, value in asyncio.run(read_topic(bootstrap, topic + "-out", 1))[0]]
    assert set(written) == set(expected), "a message was lost"
    # At-least-once: what the first run wrote after its last checkpoint is written again, nothing else.
    assert written[-len(expected) + second_run[0] :] == expected[second_run[0] :]

    final = asyncio.run(read_checkpoints(Config(config), ["Partition 0"]))["Partition 0"]
    assert final == {SystemStreamPartition("kafka", topic, 0): str(MESSAGES)}


class Counting:
    """Counts what it processes (consume only: no outputs)."""

    count = 0

    def process(self, envelope: object, collector: object, coordinator: object) -> None:
        Counting.count += 1
        time.sleep(0.001)


@pytest.mark.faults
def test_a_frozen_broker_mid_run_fails_the_consumer_naming_it(
    own_kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = own_kafka_broker.bootstrap_servers

    async def go() -> None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"%d" % i for i in range(400)])

    asyncio.run(go())
    config = Config(
        kafka_config(
            bootstrap,
            **{
                "job.name": topic,
                "task.inputs": f"kafka.{topic}",
                "task.checkpoint.factory": "samza_nb.checkpoint.inmemory.InMemoryCheckpointManagerFactory",
                "systems.kafka.samza.broker.timeout.ms": str(BROKER_TIMEOUT_MS),
                "systems.kafka.consumer.max.partition.fetch.bytes": "2048",
            },
        )
    )
    Counting.count = 0
    runner = LocalJobRunner(config, Counting)

    def freeze() -> None:
        eventually(lambda: Counting.count >= 100, timeout=60, message="100 messages processed")
        own_kafka_broker.pause()

    freezer = threading.Thread(target=freeze, daemon=True)
    freezer.start()
    started = time.monotonic()
    try:
        with pytest.raises(SystemConsumersError, match=rf"lost the connection to Kafka broker {bootstrap}"):
            runner.run(timeout=60)
    finally:
        own_kafka_broker.resume()
    assert time.monotonic() - started < 20
    assert Counting.count >= 100
