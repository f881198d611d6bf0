"""``samza-nb clean --all --topics``: a finished job's Kafka topics (coordinator, checkpoint, changelog) stay
behind after its runs and a plain clean; with ``--all --topics`` they are deleted (``--dry-run`` lists them),
the inputs are not, and the next run starts the job anew."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections import Counter
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient

from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.container.test_state_jobs import store_contents
from tests.integration.runtime.test_restore_state import env

from .helpers import create_topic, kafka_config, produce, write_properties
from .test_broker_loss import TASK, start_job, wait_for_progress

COUNT_TASK = """
class Count:
    def init(self, context):
        self.counts = context.get_store("counts")

    def process(self, envelope, collector, coordinator):
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + 1)
"""


def samza(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", *args, "--config-path", "job.properties"],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        env=env(),
    )


def ok(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()


async def topics(bootstrap: str) -> set[str]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        return set(await admin.list_topics())
    finally:
        await admin.close()


def test_clean_all_topics_deletes_the_jobs_topics_and_the_job_starts_anew(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    words = [f"w{i % 5}" for i in range(40)]
    asyncio.run(create_topic(bootstrap, topic, 1))
    asyncio.run(produce(bootstrap, topic, [word.encode() for word in words]))
    config = kafka_config(
        bootstrap,
        **{
            "job.name": topic,
            "task.class": "count_task.Count",
            "task.inputs": f"kafka.{topic}",
            "job.coordinator.system": "kafka",
            "systems.kafka.samza.msg.serde": "string",
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.key.serde": "string",
            "stores.counts.msg.serde": "int",
            "stores.counts.changelog": f"kafka.{topic}-changelog",
            "job.logged.store.base.dir": str(tmp_path / "state"),
        },
    )
    (tmp_path / "count_task.py").write_text(COUNT_TASK)
    write_properties(tmp_path / "job.properties", config)
    ok(samza(tmp_path, "run", "--no-progress", "--max-messages", str(len(words))))
    stores = tmp_path / "state" / f"{topic}-1" / "stores"
    assert store_contents(stores, "counts") == Counter(words)
    mine = {f"__samza_coordinator_{topic}_1", f"__samza_checkpoint_ver_1_for_{topic}_1", f"{topic}-changelog"}
    assert mine <= asyncio.run(topics(bootstrap)), "left behind: the job's topics"

    kept = ok(samza(tmp_path, "clean"))
    assert not any("topic" in line.split(":")[0] for line in kept[:-1]), kept
    assert mine <= asyncio.run(topics(bootstrap)), "a plain clean keeps the topics the next run resumes from"
    listed = ok(samza(tmp_path, "clean", "--all", "--topics", "--dry-run"))
    assert "3 topic(s)" in listed[0] and "dry run" in listed[0], listed
    assert any(line == f"  topics on system 'kafka': {', '.join(sorted(mine))}" for line in listed), listed
    assert mine <= asyncio.run(topics(bootstrap))

    lines = ok(samza(tmp_path, "clean", "--all", "--topics"))
    assert "removed" in lines[0] and "3 topic(s)" in lines[0], lines
    left = asyncio.run(topics(bootstrap))
    assert not mine & left and topic in left, "the job's topics deleted, its input kept"
    assert not (tmp_path / "state" / f"{topic}-1").exists()

    # the job starts anew: every message again, counted from nothing
    ok(samza(tmp_path, "run", "--no-progress", "--max-messages", str(len(words))))
    assert store_contents(stores, "counts") == Counter(words)


def test_clean_is_refused_while_a_driver_holds_the_job(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    """A Kafka-checkpointed job without stores holds no local file: only its driver's claim on the
    coordinator stream says it runs (the reset's check, refuse_while_running)."""
    bootstrap = kafka_broker.bootstrap_servers
    asyncio.run(create_topic(bootstrap, topic, 1))
    asyncio.run(produce(bootstrap, topic, [b"%d" % i for i in range(400)]))  # no STOP: the job runs on
    config = kafka_config(
        bootstrap,
        **{
            "job.name": topic,
            "task.class": "forward.Forward",
            "task.inputs": f"kafka.{topic}",
            "task.commit.ms": "100",
            "test.output": topic + "-out",
            "test.delay.s": "0.01",
            "job.coordinator.system": "kafka",
            "job.logged.store.base.dir": str(tmp_path / "state"),
        },
    )
    (tmp_path / "forward.py").write_text(TASK)
    write_properties(tmp_path / "job.properties", config)
    job = start_job(tmp_path)
    try:
        wait_for_progress(tmp_path, job, 20)
        refused = samza(tmp_path, "clean", "--all", "--topics")
        assert job.poll() is None, "the job ran all along"
    finally:
        job.kill()
        job.communicate(timeout=30)
    assert refused.returncode == 1 and refused.stdout == "", refused.stdout
    errors = [line for line in refused.stderr.splitlines() if line.startswith("samza-nb: error: ")]
    assert len(errors) == 1 and f"cannot clean job '{topic}'" in errors[0], refused.stderr
    assert f"process {job.pid}" in errors[0], errors
    mine = {f"__samza_coordinator_{topic}_1", f"__samza_checkpoint_ver_1_for_{topic}_1"}
    assert mine <= asyncio.run(topics(bootstrap)), "nothing deleted"
