"""``samza-nb control`` on a running ``samza-nb run`` of two container processes: pause reaches both (their
counts stay put while input is waiting), set reaches both, resume lets them go on."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from samza_nb.runtime.dev_broker import free_port
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.integration.runtime.test_multi_container import ROOT, processed
from tests.integration.runtime.test_multi_container_log import status

PARTITIONS, PER_PARTITION = 4, 200


def start(workdir: Path, port: int) -> subprocess.Popen[str]:
    log = DurableLog(workdir / "state" / "log")
    log.create_stream("clicks", PARTITIONS)
    for p in range(PARTITIONS):
        log.send_batch("clicks", ((None, f"p{p}-{i}".encode(), p) for i in range(PER_PARTITION)))
    log.flush()
    log.close()
    config = {
        "job.name": "steered",
        "task.class": "tests.unit.runtime.multi_tasks.Record",
        "task.inputs": "log.clicks",
        "systems.log.samza.offset.default": "oldest",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(workdir / "state"),
        "test.sleep.ms": "10",
        "cluster-manager.jobcoordinator.url.port": str(port),
        "cluster-manager.container.status.interval.ms": "50",
    }
    (workdir / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"],
        cwd=workdir,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def control(port: int, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", "control", *args, "--coordinator-url", f"http://127.0.0.1:{port}"],
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )


def reports(port: int) -> dict[str, Any]:
    now = status(port)
    return dict(now["containers"]) if now else {}


def test_pause_set_and_resume_reach_both_containers_through_the_coordinator(tmp_path: Path) -> None:
    port = free_port()
    run = start(tmp_path, port)
    try:
        eventually(
            lambda: (r := reports(port)) and all(c.get("processed", 0) >= 5 for c in r.values()), timeout=60
        )
        paused = control(port, "pause", "--timeout", "60")
        assert paused.returncode == 0, paused.stderr
        assert json.loads(paused.stdout)["paused"] == ["0", "1"]
        counts = {cid: report["processed"] for cid, report in reports(port).items()}
        assert all(report["paused"] for report in reports(port).values())
        lines = len(processed(tmp_path))

        # While paused, a change of a knob makes a full round trip through both containers: they are alive
        # and reporting, yet process nothing though most of their input is waiting.
        changed = control(port, "set", "task.max.concurrency=3")
        assert changed.returncode == 0, changed.stderr
        assert json.loads(changed.stdout)["control"]["knobs"] == {"task.max.concurrency": "3"}
        eventually(
            lambda: all(r["knobs"].get("task.max.concurrency") == "3" for r in reports(port).values()),
            message="both containers apply the knob",
        )
        after = reports(port)
        assert {cid: report["processed"] for cid, report in after.items()} == counts
        assert all(report["paused"] for report in after.values())
        assert len(processed(tmp_path)) == lines
        assert sum(counts.values()) < PARTITIONS * PER_PARTITION

        refused = control(port, "set", "job.name=other")
        assert refused.returncode == 2
        assert "job.name cannot change while the job runs" in refused.stderr
        assert "task.max.concurrency" in refused.stderr

        # A key both containers check against their job and refuse (no priority tiers: no priority or
        # bootstrap stream configured at start) comes back to the caller, named, and is withdrawn.
        tiers = control(port, "set", "systems.log.streams.clicks.samza.priority=2")
        assert tiers.returncode == 2
        assert "refused and withdrawn: container 0: " in tiers.stderr and "container 1: " in tiers.stderr
        assert "stream priorities" in tiers.stderr
        shown = control(port, "show")
        assert json.loads(shown.stdout)["control"]["knobs"] == {"task.max.concurrency": "3"}

        resumed = control(port, "resume")
        assert resumed.returncode == 0, resumed.stderr
        eventually(
            lambda: all(not r["paused"] and r["processed"] > counts[cid] for cid, r in reports(port).items()),
            timeout=60,
            message="both containers go on after the resume",
        )
    finally:
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    assert run.returncode == 0, err
    assert f"job coordinator of steered: http://127.0.0.1:{port}" in err
