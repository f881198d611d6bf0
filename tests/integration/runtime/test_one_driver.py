"""A job runs once on this machine too: a second ``samza-nb run`` of a running two-container job (same
``job.name`` and ``job.id``) is refused in one line naming the running driver, and starts no container; a
driver killed with -9 leaves a claim the next run takes over, saying so (docs/concepts/guarantees.md)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from samza_nb.runtime.dev_broker import free_port
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.integration.runtime.test_multi_container import ROOT, processed
from tests.integration.runtime.test_multi_container_log import status

PARTITIONS, PER_PARTITION = 2, 400


def prepare(workdir: Path, tag: str = "", create: bool = True) -> None:
    """The input: a durable log stream (that never ends) with PARTITIONS x PER_PARTITION more messages."""
    log = DurableLog(workdir / "state" / "log")
    if create:
        log.create_stream("clicks", PARTITIONS)
    for p in range(PARTITIONS):
        log.send_batch("clicks", ((None, f"{tag}p{p}-{i}".encode(), p) for i in range(PER_PARTITION)))
    log.flush()
    log.close()


def start(workdir: Path, port: int) -> subprocess.Popen[str]:
    """``samza-nb run`` of the job (two container processes) with its coordinator on ``port``."""
    config = {
        "job.name": "once",
        "task.class": "tests.unit.runtime.multi_tasks.Record",
        "task.inputs": "log.clicks",
        "systems.log.samza.offset.default": "oldest",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(workdir / "state"),
        "test.sleep.ms": "10",
        "cluster-manager.jobcoordinator.url.port": str(port),
        "cluster-manager.container.status.interval.ms": "50",
        "cluster-manager.container.coordinator.timeout.ms": "2000",
    }
    (workdir / f"job-{port}.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", f"job-{port}.properties", "--no-progress"],
        cwd=workdir,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def container_pids(port: int) -> set[int]:
    """The pids of the containers that reported to the coordinator on ``port``."""
    now = status(port) or {}
    return {int(report["pid"]) for report in now.get("containers", {}).values() if report.get("pid")}


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[-1].split()[0] == "Z"


def test_a_second_driver_is_refused_and_a_killed_one_is_taken_over(tmp_path: Path) -> None:
    prepare(tmp_path)
    first_port, second_port, third_port = free_port(), free_port(), free_port()
    first = start(tmp_path, first_port)
    second: subprocess.Popen[str] | None = None
    third: subprocess.Popen[str] | None = None
    try:
        eventually(lambda: len(container_pids(first_port)) == 2 and processed(tmp_path), timeout=60)
        first_containers = container_pids(first_port)

        second = start(tmp_path, second_port)
        _, err = second.communicate(timeout=60)
        lines = [line for line in err.splitlines() if line.strip()]
        assert second.returncode != 0, err
        assert len(lines) == 1, err
        assert "is already running" in lines[0]
        assert f"process {first.pid} on host {socket.gethostname()} since " in lines[0], lines[0]
        assert {pid for _, pid, *_ in processed(tmp_path)} <= first_containers, "no container of the second"
        assert first.poll() is None, "the first driver runs on"

        first.kill()  # -9: its claim stays in the coordinator stream
        first.communicate()
        eventually(lambda: all(map(gone, first_containers)), timeout=60, message="its containers end")
        before = len(processed(tmp_path))
        third = start(tmp_path, third_port)
        prepare(tmp_path, "more-", create=False)
        eventually(lambda: len(processed(tmp_path)) > before, timeout=60, message="the next driver runs")
        third.send_signal(signal.SIGTERM)
        _, err = third.communicate(timeout=60)
        assert third.returncode == 0, err
        assert f"taking over from the driver process {first.pid} on host {socket.gethostname()}" in err
        assert f"its process {first.pid} is gone from this host" in err
    finally:
        for process in (first, second, third):
            if process is not None and process.poll() is None:
                process.kill()
                process.communicate()
