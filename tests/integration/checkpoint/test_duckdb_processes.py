"""DuckDBCheckpointManager and other processes: a checkpoint outlives its writer (also a kill -9), and the
file is locked while a manager runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from samza_nb.checkpoint import Checkpoint, DuckDBCheckpointManager
from samza_nb.errors import CheckpointError
from tests.unit.checkpoint.test_duckdb import SSP0, read, run

REPO = Path(__file__).resolve().parents[3]

# A child process that starts a manager on argv[1] and writes {SSP0: argv[2]} for "Partition 0", then
# reports "written" and waits for stdin to close (so the test can kill it, or let it exit normally).
CHILD_WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.checkpoint import Checkpoint, DuckDBCheckpointManager

    async def main():
        manager = DuckDBCheckpointManager(sys.argv[1], "job", "1")
        await manager.start()
        ssp = SystemStreamPartition("kafka", "page-views", 0)
        await manager.write_checkpoint("Partition 0", Checkpoint({ssp: sys.argv[2]}, {"counts": "9"}))
        print("written", flush=True)
        sys.stdin.read()
        if sys.argv[3] == "stop":
            await manager.stop()

    asyncio.run(main())
    """
)


# A child that starts a manager on argv[1] (a file that does not exist yet), writes nothing, reports
# "started" and waits for stdin to close, then stops it.
CHILD_STARTER = textwrap.dedent(
    """
    import sys
    from samza_nb.checkpoint import DuckDBCheckpointManager

    manager = DuckDBCheckpointManager(sys.argv[1], "job", "1")
    manager.start_sync()
    print("written", flush=True)
    sys.stdin.read()
    manager.stop_sync()
    """
)


def child(path: Path, offset: str, mode: str, script: str = CHILD_WRITER) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(
        [sys.executable, "-c", script, str(path), offset, mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=REPO,
    )


def wait_written(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if line.strip() != "written":
        proc.kill()
        _, err = proc.communicate(timeout=10)
        pytest.fail(f"child did not write: {line!r} {err}")


def finish(proc: subprocess.Popen[str]) -> None:
    proc.communicate(timeout=10)
    assert proc.returncode == 0 or proc.returncode == -signal.SIGKILL


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "job-1" / "samza.duckdb"


def test_checkpoint_written_by_another_process_survives_it(path: Path) -> None:
    proc = child(path, "123", "stop")
    wait_written(proc)
    finish(proc)
    assert read(path, "Partition 0") == Checkpoint({SSP0: "123"}, {"counts": "9"})
    assert read(path, "Partition 1") is None


def test_checkpoint_is_durable_when_write_returns_even_after_kill_9(path: Path) -> None:
    proc = child(path, "77", "stop")
    wait_written(proc)
    proc.send_signal(signal.SIGKILL)
    finish(proc)
    assert proc.returncode == -signal.SIGKILL
    assert read(path, "Partition 0") == Checkpoint({SSP0: "77"}, {"counts": "9"})


def test_stop_releases_the_file_for_another_process(path: Path) -> None:
    m = DuckDBCheckpointManager(path, "job", "1")
    run(m.start())
    run(m.write_checkpoint("Partition 0", Checkpoint({SSP0: "1"})))
    run(m.stop())
    proc = child(path, "2", "stop")  # would fail with "in use" if the lock were still held
    wait_written(proc)
    finish(proc)
    assert read(path, "Partition 0") == Checkpoint({SSP0: "2"}, {"counts": "9"})


def test_file_in_use_by_another_process(path: Path) -> None:
    proc = child(path, "5", "stop")
    try:
        wait_written(proc)
        m = DuckDBCheckpointManager(path, "job", "1")
        with pytest.raises(CheckpointError) as info:
            run(m.start())
        assert "in use" in str(info.value)
        assert str(path) in str(info.value)
        with pytest.raises(CheckpointError, match="before start"):
            run(m.read_last_checkpoint("Partition 0"))
    finally:
        finish(proc)
    assert read(path, "Partition 0") == Checkpoint({SSP0: "5"}, {"counts": "9"})


def test_a_file_not_created_yet_is_in_use_by_the_process_whose_manager_started_on_it(path: Path) -> None:
    proc = child(path, "", "", CHILD_STARTER)
    try:
        wait_written(proc)  # started: it claimed the file, which its first write would create
        assert not path.exists()
        m = DuckDBCheckpointManager(path, "job", "1")
        with pytest.raises(CheckpointError) as info:
            m.start_sync()
        assert "in use" in str(info.value)
        assert str(path) in str(info.value)
    finally:
        finish(proc)
    assert read(path, "Partition 0") is None  # stopped: the file is free for another process
