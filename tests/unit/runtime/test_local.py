"""LocalJobRunner in this process: task loading from task.class, run to the end, timeout, stop."""

from __future__ import annotations

import asyncio
import sys
import textwrap
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, ConfigError, SamzaError, SystemStreamPartition
from samza_nb.errors import JobTimeoutError
from samza_nb.runtime import LocalJobRunner
from tests.eventually import aeventually, eventually

SSP = SystemStreamPartition("file", "lines", 0)


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory whose modules are importable by task.class; sys.path restored afterwards."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


def job_config(lines: int, workdir: Path, **extra: Any) -> Config:
    (workdir / "in.txt").write_text("".join(f"line {i}\n" for i in range(lines)))
    values = {
        "job.name": "local-test",
        "task.inputs": "file.lines",
        "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        "systems.file.streams.lines.path": "in.txt",
        "systems.file.samza.offset.default": "oldest",
        "job.logged.store.base.dir": str(workdir / "state"),
    }
    values.update(extra)
    return Config(values)


def task_module(workdir: Path, source: str) -> str:
    """Write a uniquely named module holding ``source``; returns its name."""
    name = f"task_{uuid.uuid4().hex}"
    (workdir / f"{name}.py").write_text(textwrap.dedent(source))
    return name


class Recorder:
    seen: list[str]

    def __init__(self) -> None:
        self.seen = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.seen.append(envelope.offset)


class Slow:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        time.sleep(0.001)


def test_task_class_is_imported_from_the_working_directory(workdir: Path) -> None:
    module = task_module(
        workdir,
        """
        SEEN = []
        class Task:
            def process(self, envelope, collector, coordinator):
                SEEN.append(envelope.message)
        """,
    )
    runner = LocalJobRunner(job_config(5, workdir, **{"task.class": f"{module}.Task"}))
    runner.run(timeout=30)
    assert runner.processed == 5
    seen = sys.modules[module].SEEN
    assert seen == [f"line {i}" for i in range(5)]
    assert asyncio.run(runner.read_checkpoints()) == {"Partition 0": {SSP: "4"}}


def test_a_given_task_instance_is_used_instead_of_task_class(workdir: Path) -> None:
    task = Recorder()
    runner = LocalJobRunner(job_config(3, workdir), task)
    runner.run(timeout=30)
    assert task.seen == ["0", "1", "2"]


def test_a_second_run_resumes_after_the_checkpoint(workdir: Path) -> None:
    first, second = Recorder(), Recorder()
    LocalJobRunner(job_config(10, workdir), first, max_messages=4).run(timeout=30)
    assert first.seen == ["0", "1", "2", "3"]
    runner = LocalJobRunner(job_config(10, workdir), second)
    runner.run(timeout=30)
    assert second.seen == [str(i) for i in range(4, 10)]
    assert asyncio.run(runner.read_checkpoints()) == {"Partition 0": {SSP: "9"}}


def test_missing_task_class_is_a_config_error_naming_the_key(workdir: Path) -> None:
    with pytest.raises(ConfigError, match=r"task\.class") as info:
        LocalJobRunner(job_config(1, workdir))
    assert info.value.key == "task.class"


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("no_such_module_xyz.Task", "module 'no_such_module_xyz' not found"),
        ("json.NoSuchTask", "has no attribute 'NoSuchTask'"),
        ("NotDotted", "dotted path"),
    ],
)
def test_unimportable_task_class_names_key_and_path(workdir: Path, path: str, why: str) -> None:
    with pytest.raises(ConfigError) as info:
        LocalJobRunner(job_config(1, workdir, **{"task.class": path}))
    assert info.value.key == "task.class"
    assert "task.class" in str(info.value) and path in str(info.value) and why in str(info.value)


def test_a_module_that_fails_on_import_is_a_config_error(workdir: Path) -> None:
    module = task_module(workdir, "raise RuntimeError('boom at import')\n")
    with pytest.raises(ConfigError, match="boom at import") as info:
        LocalJobRunner(job_config(1, workdir, **{"task.class": f"{module}.Task"}))
    assert info.value.key == "task.class"


def test_a_task_class_that_is_not_a_task_is_a_config_error(workdir: Path) -> None:
    module = task_module(workdir, "NOT_A_TASK = 42\n")
    with pytest.raises(ConfigError, match=r"task\.class") as info:
        LocalJobRunner(job_config(1, workdir, **{"task.class": f"{module}.NOT_A_TASK"}))
    assert info.value.key == "task.class"


def test_a_misspelt_key_is_refused_naming_the_key_it_resembles(workdir: Path) -> None:
    typo = {"systems.file.samza.ofset.default": "upcoming"}
    with pytest.raises(ConfigError, match=r"did you mean systems\.file\.samza\.offset\.default\?$") as info:
        LocalJobRunner(job_config(1, workdir, **typo), Recorder())
    assert info.value.key == "systems.file.samza.ofset.default"
    task = Recorder()  # a key of the user's own, far from every known one, is taken
    LocalJobRunner(job_config(2, workdir, **{"myapp.greeting": "hi"}), task).run(timeout=30)
    assert task.seen == ["0", "1"]


def test_more_than_one_container_is_refused(workdir: Path) -> None:
    with pytest.raises(ConfigError, match=r"job\.container\.count"):
        LocalJobRunner(job_config(1, workdir, **{"job.container.count": "2"}), Recorder())


def test_timeout_stops_gracefully_and_commits(workdir: Path) -> None:
    pool = {"job.container.thread.pool.size": "1"}
    runner = LocalJobRunner(job_config(100_000, workdir, **pool), Slow)
    # A generous bound: 100,000 messages of 1 ms cannot finish in 2 s, and the job starts well within it.
    with pytest.raises(JobTimeoutError, match="within 2 s"):
        runner.run(timeout=2)
    processed = runner.processed
    assert 0 < processed < 100_000
    assert asyncio.run(runner.read_checkpoints()) == {"Partition 0": {SSP: str(processed - 1)}}


def test_stop_from_another_thread_is_graceful(workdir: Path) -> None:
    pool = {"job.container.thread.pool.size": "1"}  # process runs off the loop thread: a prompt stop
    runner = LocalJobRunner(job_config(100_000, workdir, **pool), Slow)

    def stop_once_running() -> None:
        try:
            eventually(lambda: runner.processed > 0, message="the first message processed")
        finally:
            runner.stop()

    threading.Thread(target=stop_once_running, daemon=True).start()
    runner.run(timeout=30)
    processed = runner.processed
    assert 0 < processed < 100_000
    assert asyncio.run(runner.read_checkpoints()) == {"Partition 0": {SSP: str(processed - 1)}}


def test_stop_before_the_run_commits_nothing_new(workdir: Path) -> None:
    runner = LocalJobRunner(job_config(10, workdir), Recorder())
    runner.stop()
    runner.run(timeout=30)
    assert runner.processed == 0


def test_cancelling_run_async_cancels_the_container(workdir: Path) -> None:
    pool = {"job.container.thread.pool.size": "1"}
    runner = LocalJobRunner(job_config(100_000, workdir, **pool), Slow)

    async def go() -> None:
        job = asyncio.ensure_future(runner.run_async())
        await aeventually(lambda: runner.processed > 0, message="the job running")
        job.cancel()
        with pytest.raises(asyncio.CancelledError):
            await job

    asyncio.run(go())
    assert runner.container.state.value == "failed"


def test_run_inside_a_running_loop_says_to_await_run_async(workdir: Path) -> None:
    runner = LocalJobRunner(job_config(1, workdir), Recorder())

    async def go() -> None:
        runner.run()

    with pytest.raises(SamzaError, match="run_async"):
        asyncio.run(go())


def test_task_failure_is_raised(workdir: Path) -> None:
    class Failing:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "2":
                raise ValueError("bad line")

    runner = LocalJobRunner(job_config(5, workdir), Failing)
    with pytest.raises(SamzaError, match="bad line"):
        runner.run(timeout=30)
