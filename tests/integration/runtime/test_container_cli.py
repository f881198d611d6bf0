"""samza-nb container: one container process against a job coordinator in this process."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.runtime.dev_broker import free_port
from tests.eventually import aeventually
from tests.integration.runtime.test_multi_container import ROOT, job, processed, workdir
from tests.unit.coordinator.memory_store import MemoryStore

__all__ = ["workdir"]  # the fixture, shared


def container_env(url: str | None, container_id: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("SAMZA_COORDINATOR_URL", "SAMZA_CONTAINER_ID")}
    env["PYTHONPATH"] = str(ROOT)
    if url is not None:
        env["SAMZA_COORDINATOR_URL"] = url
    if container_id is not None:
        env["SAMZA_CONTAINER_ID"] = container_id
    return env


async def start_container(
    url: str | None, container_id: str | None, *args: str
) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "samza_nb",
        "container",
        *args,
        env=container_env(url, container_id),
        stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )


def test_without_a_coordinator_url_it_exits_2_naming_the_variable(workdir: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "samza_nb", "container"],
        env=container_env(None, "0"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "samza-nb: error: no SAMZA_COORDINATOR_URL in the environment and no --coordinator-url"
    )


def test_an_unreachable_coordinator_is_a_bounded_wait_and_an_error_naming_the_url(workdir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    result = subprocess.run(
        [sys.executable, "-m", "samza_nb", "container", "--connect-timeout", "0.5"],
        env=container_env(url, "0"),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"samza-nb: container 0: error: could not fetch the job model from {url}")


def test_a_container_runs_its_tasks_and_reports_host_and_progress(workdir: Path) -> None:
    store = MemoryStore()

    async def go() -> None:
        coordinator = JobCoordinator(job(workdir, 30), store=store)
        await coordinator.start()
        try:
            process = await start_container(coordinator.url, "1")
            _, err = await process.communicate()
            assert process.returncode == 0, err.decode()
            report = coordinator.job_status().reports["1"]
            assert (report.state, report.processed, report.host) == ("stopped", 30, socket.gethostname())
            assert [task["name"] for task in report.tasks] == ["SystemStreamPartition [file, b, 0]"]
            assert coordinator.locality() == {"1": socket.gethostname()}
            await aeventually(lambda: store.container_hosts() == {"1": socket.gethostname()})
        finally:
            await coordinator.stop()

    asyncio.run(go())
    assert {stream for _, _, stream, _, _ in processed(workdir)} == {"b"}, "container 1 ran only its task"


def test_an_unknown_container_id_fails_naming_the_containers(workdir: Path) -> None:
    async def go() -> tuple[int | None, str]:
        coordinator = JobCoordinator(job(workdir, 3), store=MemoryStore())
        await coordinator.start()
        try:
            process = await start_container(coordinator.url, "7")
            _, err = await process.communicate()
            return process.returncode, err.decode()
        finally:
            await coordinator.stop()

    status, err = asyncio.run(go())
    assert status == 1
    assert (
        err.strip()
        == "samza-nb: container 7: error: container '7' is not in the job model (its containers: 0, 1)"
    )


def test_sigterm_stops_the_container_gracefully_and_it_commits(workdir: Path) -> None:
    async def go() -> None:
        coordinator = JobCoordinator(job(workdir, 100_000, **{"test.sleep.ms": "1"}), store=MemoryStore())
        await coordinator.start()
        try:
            process = await start_container(coordinator.url, "0")

            def running() -> bool:
                report = coordinator.job_status().reports.get("0")
                return report is not None and report.processed >= 5

            await aeventually(running)
            process.send_signal(signal.SIGTERM)
            _, err = await process.communicate()
            assert process.returncode == 0, err.decode()
            report = coordinator.job_status().reports["0"]
            assert report.state == "stopped"
            partitions = report.tasks[0]["partitions"]
            assert partitions[0]["committed-offset"] == partitions[0]["processed-offset"] is not None
        finally:
            await coordinator.stop()

    asyncio.run(go())


def test_a_container_whose_coordinator_is_gone_stops_and_fails(workdir: Path) -> None:
    config = job(
        workdir, 100_000, **{"test.sleep.ms": "1", "cluster-manager.container.coordinator.timeout.ms": "500"}
    )

    async def go() -> tuple[int | None, str]:
        coordinator = JobCoordinator(config, store=MemoryStore())
        await coordinator.start()
        process = await start_container(coordinator.url, "0")
        try:
            await aeventually(lambda: "0" in coordinator.job_status().reports)
        finally:
            await coordinator.stop()
        _, err = await asyncio.wait_for(process.communicate(), 60)
        return process.returncode, err.decode()

    status, err = asyncio.run(go())
    assert status == 1
    assert "was unreachable for 0.5 s" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("flag", ["--coordinator-url", "--container-id"])
def test_the_flags_are_documented(flag: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "samza_nb", "container", "--help"],
        env=container_env(None, None),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert flag in result.stdout and "SAMZA_COORDINATOR_URL" in result.stdout
