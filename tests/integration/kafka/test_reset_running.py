"""A reset is refused while the job runs, also when nothing on this machine's disk says so: a job whose
checkpoints live on Kafka and that has no stores holds no local file, only its driver's claim on the
coordinator stream (docs/concepts/guarantees.md). A driver killed with -9 leaves a stale claim: the reset
then goes ahead."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from samza_nb import Config
from samza_nb.errors import JobRunningError
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import read_checkpoints
from samza_nb.runtime.reset import reset_job
from tests.eventually import eventually

from .helpers import create_topic, kafka_config, produce, write_properties
from .test_broker_loss import TASK, start_job, wait_for_progress

pytestmark = pytest.mark.timeout(240)


def checkpoint(config: Config) -> dict[object, str]:
    """The checkpointed offsets of the job's one task (``{}``: none)."""
    return asyncio.run(read_checkpoints(config, ["Partition 0"]))["Partition 0"]


def test_reset_is_refused_while_a_kafka_checkpointed_job_without_stores_runs(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers

    async def prepare() -> None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [b"%d" % i for i in range(400)])  # no STOP: the job runs on

    asyncio.run(prepare())
    settings = kafka_config(
        bootstrap,
        **{
            "job.name": topic,
            "task.class": "forward.Forward",
            "task.inputs": f"kafka.{topic}",
            "task.commit.ms": "100",
            "test.output": topic + "-out",
            "test.delay.s": "0.01",
            "job.logged.store.base.dir": str(tmp_path / "state"),
        },
    )
    (tmp_path / "forward.py").write_text(TASK)
    write_properties(tmp_path / "job.properties", settings)
    config = Config(settings)
    job = start_job(tmp_path)
    try:
        wait_for_progress(tmp_path, job, 20)
        eventually(lambda: bool(checkpoint(config)), timeout=60, message="the job's first checkpoint")
        assert not any((tmp_path / "state").rglob("*.duckdb")), "the job must hold no local DuckDB file"
        with pytest.raises(JobRunningError) as refused:
            reset_job(config)
        message = str(refused.value)
        assert "\n" not in message and "while it runs" in message and f"process {job.pid}" in message
        assert checkpoint(config), "a refused reset drops nothing"
        os.kill(job.pid, signal.SIGKILL)
        job.wait(timeout=30)
    finally:
        if job.poll() is None:
            job.kill()
        job.communicate(timeout=30)
    line = reset_job(config)  # the killed driver's claim is stale: its process is gone from this host
    assert "reset" in line and "checkpoints of 1 task(s)" in line, line
    assert not checkpoint(config)
