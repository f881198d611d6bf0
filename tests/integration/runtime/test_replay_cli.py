"""``samza-nb run --record DIR`` then ``--replay DIR``, as real processes (``python -m samza_nb``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.integration.runtime.test_cli import env

REPO = Path(__file__).resolve().parents[3]

JITTERY_TASK = """
import asyncio
import random


class Task:
    \"\"\"8 in flight, each waiting a random while: appends its message to processed.log once it ends.\"\"\"

    def init(self, context):
        self.log = open("processed.log", "a")

    async def process(self, envelope, collector, coordinator):
        await asyncio.sleep(random.random() * 0.002)
        self.log.write(envelope.message + "\\n")
        self.log.flush()

    def close(self):
        self.log.close()
"""


def cli(workdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m samza_nb ARGS`` in ``workdir``, importing this checkout's samza_nb."""
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        env={**env(), "PYTHONPATH": str(REPO)},
    )


def make_job(workdir: Path, lines: int) -> None:
    workdir.mkdir()
    (workdir / "jobtask.py").write_text(JITTERY_TASK)
    (workdir / "in.txt").write_text("".join(f"line {i}\n" for i in range(lines)))
    config = {
        "job.name": "replay-cli",
        "task.class": "jobtask.Task",
        "task.inputs": "file.lines",
        "task.max.concurrency": "8",
        "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        "systems.file.streams.lines.path": "in.txt",
        "systems.file.samza.offset.default": "oldest",
    }
    (workdir / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))


def processed(workdir: Path) -> list[str]:
    return (workdir / "processed.log").read_text().splitlines()


def test_a_recorded_run_replays_in_another_process_with_the_same_order(tmp_path: Path) -> None:
    make_job(tmp_path / "recorded", 200)
    recording = tmp_path / "recording"
    result = cli(tmp_path / "recorded", "run", "--config-path", "job.properties", "--record", str(recording))
    assert result.returncode == 0, result.stderr
    order = processed(tmp_path / "recorded")
    assert sorted(order) == sorted(f"line {i}" for i in range(200))
    assert (recording / "header.json").exists()

    for name in ("replay-1", "replay-2"):
        make_job(tmp_path / name, 200)  # a fresh working directory: no state, no checkpoint
        result = cli(tmp_path / name, "run", "--config-path", "job.properties", "--replay", str(recording))
        assert result.returncode == 0, result.stderr
        assert processed(tmp_path / name) == order


def test_a_replay_over_a_shorter_input_fails_naming_the_position(tmp_path: Path) -> None:
    make_job(tmp_path / "recorded", 50)
    recording = tmp_path / "recording"
    assert (
        cli(
            tmp_path / "recorded", "run", "--config-path", "job.properties", "--record", str(recording)
        ).returncode
        == 0
    )
    make_job(tmp_path / "short", 30)
    result = cli(tmp_path / "short", "run", "--config-path", "job.properties", "--replay", str(recording))
    assert result.returncode == 1
    assert "ReplayDivergedError" in result.stderr or "part at position 31" in result.stderr
    assert "position 31" in result.stderr
    assert "file.lines#0 end-of-stream" in result.stderr


def test_record_and_replay_are_refused_for_several_containers(tmp_path: Path) -> None:
    make_job(tmp_path / "job", 5)
    shutil.copy(tmp_path / "job" / "job.properties", tmp_path / "job" / "two.properties")
    with (tmp_path / "job" / "two.properties").open("a") as file:
        file.write("job.container.count = 2\n")
    result = cli(tmp_path / "job", "run", "--config-path", "two.properties", "--record", str(tmp_path / "r"))
    assert result.returncode == 2
    assert "job.container.count = 1" in result.stderr
