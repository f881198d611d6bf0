"""Two container processes with no broker at all: the durable log is the input, the coordinator stream and
the checkpoints; kill -9 of one container, then a restart of the job, loses nothing."""

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

import pytest

from samza_nb import Config, SystemStreamPartition
from samza_nb.runtime.dev_broker import free_port
from samza_nb.runtime.local import read_checkpoints
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.integration.runtime.test_multi_container import ROOT, processed

PARTITIONS, PER_PARTITION = 4, 150
MESSAGES = Counter(f"p{p}-{i}" for p in range(PARTITIONS) for i in range(PER_PARTITION))


def status(port: int) -> Any:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5) as response:
            return json.loads(response.read())
    except OSError:
        return None


def job_config(workdir: Path, port: int) -> dict[str, str]:
    """Nothing but the durable log: input, coordinator stream, checkpoints (the default for 2 containers)."""
    return {
        "job.name": "no-broker",
        "task.class": "tests.unit.runtime.multi_tasks.Record",
        "task.inputs": "log.clicks",
        "systems.log.samza.offset.default": "oldest",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(workdir / "state"),
        "task.commit.ms": "100",
        "test.sleep.ms": "2",
        "cluster-manager.jobcoordinator.url.port": str(port),
        "cluster-manager.container.status.interval.ms": "50",
    }


def start(workdir: Path, port: int) -> subprocess.Popen[str]:
    config = job_config(workdir, port)
    (workdir / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"],
        cwd=workdir,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.faults
def test_kill_9_of_a_container_then_a_restart_loses_nothing(tmp_path: Path) -> None:
    log = DurableLog(tmp_path / "state" / "log")
    log.create_stream("clicks", PARTITIONS)
    for p in range(PARTITIONS):
        log.send_batch("clicks", ((None, f"p{p}-{i}".encode(), p) for i in range(PER_PARTITION)))
    log.flush()
    log.close()

    port = free_port()
    first = start(tmp_path, port)

    def both_running() -> Any:
        now = status(port)
        reports = now["containers"].values() if now else []
        return now if now and all(r.get("processed", 0) >= 20 for r in reports) else None

    victim = eventually(both_running, timeout=60)["containers"]["1"]["pid"]
    os.kill(victim, signal.SIGKILL)
    _, err = first.communicate(timeout=60)
    assert first.returncode == 1, err
    assert err.strip().splitlines()[-1].startswith("samza-nb: error: container 1"), err
    assert "SIGKILL" in err.strip().splitlines()[-1]
    done_before = Counter(message for *_, message in processed(tmp_path))
    assert done_before != MESSAGES, "the kill came before the end"

    second = start(tmp_path, free_port())
    eventually(
        lambda: set(MESSAGES) <= {m for *_, m in processed(tmp_path)}, timeout=60, message="every message"
    )
    second.send_signal(signal.SIGTERM)
    _, err = second.communicate(timeout=60)
    assert second.returncode == 0, err

    seen = Counter(message for *_, message in processed(tmp_path))
    assert set(seen) == set(MESSAGES), "nothing lost"
    gracefully_stopped = [m for m in MESSAGES if m.startswith(("p0-", "p2-"))]  # container 0's partitions
    assert all(seen[m] == 1 for m in gracefully_stopped), "container 0 committed before it stopped"
    config = Config(job_config(tmp_path, 0))
    offsets = asyncio.run(read_checkpoints(config, [f"Partition {p}" for p in range(PARTITIONS)]))
    assert offsets == {
        f"Partition {p}": {SystemStreamPartition("log", "clicks", p): str(PER_PARTITION - 1)}
        for p in range(4)
    }
