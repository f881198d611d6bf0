"""samza-nb run with job.container.count = 2: a job coordinator here and two real container processes."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import threading
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.coordinator import CoordinatorStreamStore
from samza_nb.runtime.multi_container import MultiContainerRun
from samza_nb.runtime.processes import ContainerProcesses
from tests.eventually import eventually

ROOT = Path(__file__).parents[3]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    return tmp_path


def job(workdir: Path, lines: int, **extra: str) -> Config:
    for stream in ("a", "b"):
        (workdir / f"{stream}.txt").write_text("".join(f"{stream}{i}\n" for i in range(lines)))
    values = {
        "job.name": f"multi-{uuid.uuid4().hex[:6]}",
        "task.class": "tests.unit.runtime.multi_tasks.Record",
        "task.inputs": "file.a,file.b",
        "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        "systems.file.streams.a.path": "a.txt",
        "systems.file.streams.b.path": "b.txt",
        "systems.file.samza.offset.default": "oldest",
        "job.systemstreampartition.grouper.factory": "group-by-ssp",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(workdir / "state"),
        "cluster-manager.container.status.interval.ms": "50",
    }
    values.update(extra)
    return Config(values)


def processed(workdir: Path) -> list[tuple[str, int, str, str, str]]:
    path = workdir / "processed.log"
    if not path.exists():
        return []
    rows = [line.split(" ") for line in path.read_text().splitlines(keepends=True) if line.endswith("\n")]
    return [
        (task, int(pid), stream, offset, message.rstrip("\n"))
        for task, pid, stream, offset, message in (row for row in rows if len(row) == 5)
    ]


async def coordinator_stream(config: Config) -> tuple[dict[str, int], dict[str, str]]:
    """The changelog mapping and container hosts the job's coordinator stream holds."""
    store = CoordinatorStreamStore(config)
    await store.start()
    try:
        return store.changelog_mapping(), store.container_hosts()
    finally:
        await store.stop()


def run(config: Config, **kwargs: Any) -> int:
    runner = MultiContainerRun(config, kwargs.get("max_messages"), kwargs.get("timeout"), no_progress=True)
    return asyncio.run(runner.run())


def test_two_containers_each_run_their_task_in_their_own_process(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = job(workdir, 50)
    status = run(config)
    out, err = capsys.readouterr()
    assert status == 0, err
    assert asyncio.run(coordinator_stream(config)) == (
        {"SystemStreamPartition [file, a, 0]": 0, "SystemStreamPartition [file, b, 0]": 1},
        {"0": socket.gethostname(), "1": socket.gethostname()},
    )
    rows = processed(workdir)
    assert Counter(message for *_, message in rows) == Counter(
        f"{s}{i}" for s in ("a", "b") for i in range(50)
    ), "every line processed exactly once"
    pids = {task: {pid for t, pid, *_ in rows if t == task} for task, *_ in rows}
    assert len(pids) == 2 and all(len(p) == 1 for p in pids.values())
    assert len({next(iter(p)) for p in pids.values()}) == 2, "the two tasks ran in two processes"
    assert "processed 100 messages" in out
    assert "file.a#0=49" in out and "file.b#0=49" in out


def test_a_container_writing_a_very_long_stderr_line_does_not_stall_the_job(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stderr is relayed in chunks: a 200 KB line (beyond any line buffer) is cut, and the reading goes on,
    so the container never blocks on a full pipe."""
    status = run(job(workdir, 200, **{"test.stderr.line.bytes": "200000"}))
    _, err = capsys.readouterr()
    assert status == 0, err[-500:]
    assert len(processed(workdir)) == 400


def test_a_container_stopped_before_it_could_take_the_signal_is_not_a_failure(workdir: Path) -> None:
    """SIGTERM right after the spawn reaches containers still starting (before their handlers): they die
    of it having processed nothing, which is a stop, not a failure (--max-messages reached early)."""

    async def stop_at_once() -> tuple[object, list[int | None]]:
        processes = ContainerProcesses(job(workdir, 50))
        await processes.start()
        processes.stop()
        try:
            await processes.watch(lambda: None, 0.05)
        finally:
            await processes.close()
        return processes.failed, [child.exit_status for child in processes.children]

    failed, statuses = asyncio.run(stop_at_once())
    assert failed is None, statuses
    assert all(status in (0, -signal.SIGTERM) for status in statuses), statuses


def test_max_messages_counts_every_container_and_each_commits(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run(job(workdir, 5000, **{"test.sleep.ms": "2"}), max_messages=40)
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "stopped after --max-messages 40" in err
    rows = processed(workdir)
    assert 40 <= len(rows) < 10000
    by_stream = Counter(stream for _, _, stream, _, _ in rows)
    # Usually both containers processed some; on a loaded machine one may reach the 40 before the other
    # started (each message takes 2 ms), and the budget still counts the job as a whole.
    assert set(by_stream) <= {"a", "b"} and by_stream
    for stream, count in by_stream.items():
        assert f"file.{stream}#0={count - 1}" in out, f"container of {stream} committed what it processed"


def test_a_failed_container_stops_the_job_with_one_line_naming_it(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run(job(workdir, 5000, **{"test.fail.on": "b3", "test.sleep.ms": "1"}))
    _, err = capsys.readouterr()
    assert status == 1
    last = err.strip().splitlines()[-1]
    assert last.startswith("samza-nb: error: container 1 failed:"), err
    assert "cannot process 'b3'" in last and "exited with status 1" in last
    assert "Traceback" not in err
    assert len([r for r in processed(workdir) if r[2] == "a"]) < 5000, "container 0 was stopped"


def test_sigterm_stops_every_container_gracefully_and_each_commits(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = job(workdir, 100_000, **{"test.sleep.ms": "1"})

    def terminate_once_both_run() -> None:
        eventually(lambda: {row[2] for row in processed(workdir)} == {"a", "b"})
        os.kill(os.getpid(), signal.SIGTERM)  # the runner's handler forwards it to the containers

    killer = threading.Thread(target=terminate_once_both_run, daemon=True)
    killer.start()
    status = run(config)
    killer.join()
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "SIGTERM: stopping every container gracefully" in err
    assert "interrupted; stopped gracefully" in err
    rows = processed(workdir)
    for stream in ("a", "b"):
        last = max(int(offset) for _, _, s, offset, _ in rows if s == stream)
        assert last < 99_999
        assert f"file.{stream}#0={last}" in out, "each container committed what it processed"


def test_a_task_class_the_containers_cannot_import_is_a_config_error_naming_a_container(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = run(job(workdir, 5, **{"task.class": "tests.unit.runtime.multi_tasks.Missing"}))
    _, err = capsys.readouterr()
    assert status == 2
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(
        r"samza-nb: error: container [01] failed: .*task\.class.*\(exited with status 2\)", last
    )
