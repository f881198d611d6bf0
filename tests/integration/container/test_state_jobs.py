"""Stores in jobs (issue 4): exactly-once state across kill -9, restore from a changelog, commit order."""

from __future__ import annotations

import collections
import os
import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import pytest

from samza_nb import Config, RequestScope, SystemStreamPartition
from samza_nb.checkpoint.duckdb import DuckDBCheckpointManager
from samza_nb.config.stores import changelog_systems
from samza_nb.storage.generation import MARKER_KEY
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.unit.container.harness import Job

WORDS = [f"w{i}" for i in range(200)]


def store_contents(state_dir: Path, store: str = "counts") -> dict[str, int]:
    """Committed contents of a string→int store across all partition files."""
    totals: dict[str, int] = {}
    for path in sorted(state_dir.glob("partition-*.duckdb")):
        conn = duckdb.connect(str(path), read_only=True)
        try:
            tables = [
                r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
            ]
            for table in tables:
                if table.startswith(f"store__{store}__"):
                    for key, value in conn.execute(f'SELECT k, v FROM "{table}"').fetchall():
                        totals[bytes(key).decode()] = int.from_bytes(bytes(value), "big", signed=True)
        finally:
            conn.close()
    return totals


TASK_MODULE = """
import time

class CountTask:
    def init(self, context):
        self.counts = context.get_store("counts")
        self.progress = open("progress.log", "a")

    def process(self, envelope, collector, coordinator):
        word = envelope.message
        self.counts.put(word, (self.counts.get(word) or 0) + 1)
        self.progress.write(envelope.offset + "\\n")
        self.progress.flush()
        time.sleep(0.0001)

    def close(self):
        self.progress.close()
"""


def furthest_offset(tmp_path: Path) -> int:
    """The highest input offset any run has processed so far (-1: none), from the task's progress log."""
    path = tmp_path / "progress.log"
    complete = path.read_text().split("\n")[:-1] if path.exists() else []  # a last partial line waits
    return max((int(line) for line in complete), default=-1)


KILLS = 10


def kill_9_once_past(process: subprocess.Popen[bytes], tmp_path: Path, target: int) -> None:
    """SIGKILL ``process`` as soon as the progress log shows offset ``target`` processed."""
    try:

        def reached() -> bool:
            assert process.poll() is None, f"the run ended before offset {target}: {process.returncode}"
            return furthest_offset(tmp_path) >= target

        eventually(reached, timeout=60, message=f"a run processing offset {target}")
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()


@pytest.mark.faults
@pytest.mark.slow
def test_counts_are_exact_after_kill_9_at_random_moments(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = [rng.choice(WORDS) for _ in range(12_000)]
    (tmp_path / "words.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "count_task.py").write_text(textwrap.dedent(TASK_MODULE))
    (tmp_path / "job.properties").write_text(
        textwrap.dedent(
            """
            job.name = faults
            task.class = count_task.CountTask
            task.inputs = file.words
            systems.file.samza.factory = samza_nb.systems.file.FileSystemFactory
            systems.file.streams.words.path = words.txt
            systems.file.samza.offset.default = oldest
            task.commit.ms = 150
            stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory
            stores.counts.key.serde = string
            stores.counts.msg.serde = int
            stores.counts.write.batch.size = 50
            stores.counts.object.cache.size = 100
            job.logged.store.base.dir = state
            """
        )
    )
    command = [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"]
    log_path = tmp_path / "runs.log"
    kill_points = []
    with log_path.open("wb") as log:
        # Ten runs are killed, each once it has processed a seeded random stretch past the furthest point
        # of the runs before it (so every run makes progress, wherever its checkpoint left it), always
        # well before the end of the input; the eleventh run finishes.
        for _ in range(KILLS):
            target = furthest_offset(tmp_path) + rng.randint(300, 900)
            kill_9_once_past(
                subprocess.Popen(command, cwd=tmp_path, stdout=log, stderr=log), tmp_path, target
            )
            kill_points.append(furthest_offset(tmp_path))
        process = subprocess.Popen(command, cwd=tmp_path, stdout=log, stderr=log)
        try:
            assert process.wait(timeout=120) == 0, log_path.read_text()
        finally:
            process.wait()
    assert process.returncode == 0
    # Every kill came after progress past the previous one, and before the input's end.
    assert kill_points == sorted(set(kill_points)) and kill_points[-1] < len(lines) - 1, kill_points
    assert furthest_offset(tmp_path) == len(lines) - 1
    state = tmp_path / "state" / "faults-1" / "stores"
    assert store_contents(state) == dict(collections.Counter(lines))


class CountingTask:
    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + 1)


def stateful_job(tmp_path: Path, **extra: str) -> Job:
    return Job(
        stores__counts__factory="samza_nb.storage.duckdb.DuckDBStoreFactory",
        stores__counts__key__serde="string",
        stores__counts__msg__serde="int",
        stores__counts__changelog="test.counts-changelog",
        job__logged__store__base__dir=str(tmp_path / "state"),
        **extra,
    )


def changelog_on_the_durable_log(job: Job) -> None:
    """Move the job's changelog to the durable log: a bare stream name, no default system."""
    job.config["stores.counts.changelog"] = "counts-changelog"
    assert changelog_systems(Config(job.config)) == {"log"}


@pytest.mark.faults
@pytest.mark.parametrize("on_log", [False, True], ids=["in-memory", "durable-log"])
def test_a_deleted_local_store_is_restored_from_its_changelog(tmp_path: Path, on_log: bool) -> None:
    rng = random.Random(3)
    first = [rng.choice(WORDS[:20]) for _ in range(300)]
    second = [rng.choice(WORDS[:20]) for _ in range(200)]
    job = stateful_job(tmp_path)
    if on_log:
        changelog_on_the_durable_log(job)
    job.send("in", first)
    job.run(CountingTask, max_messages=len(first))
    state = tmp_path / "state" / "test-job-1" / "stores"
    assert store_contents(state) == dict(collections.Counter(first))
    if on_log:
        with DurableLog(tmp_path / "state" / "log") as log:  # <job.logged.store.base.dir>/log
            assert log.partitions("counts-changelog") == 1
            keys = {key.decode() for _, key, _ in log.read("counts-changelog", 0)}
    else:
        envelopes, _ = job.broker.envelopes(SystemStreamPartition("test", "counts-changelog", 0), 0)
        keys = {envelope.key.decode() for envelope in envelopes}
    assert keys == set(first) | {MARKER_KEY.decode()}, "the words, after one generation marker"

    import shutil

    shutil.rmtree(state)
    job.send("in", second)
    job.end()
    restored: list[Any] = []
    job.run(CountingTask)
    restored = [e for e in job.events if type(e).__name__ == "StoreRestoreProgress"]
    assert restored and restored[-1].done
    assert store_contents(state) == dict(collections.Counter(first + second))


def test_state_commits_with_the_offsets_it_reflects(tmp_path: Path) -> None:
    class Committing(CountingTask):
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            super().process(envelope, collector, coordinator)
            if envelope.offset == "9":
                coordinator.commit(RequestScope.CURRENT_TASK)
                coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)

    job = stateful_job(tmp_path)
    job.send("in", ["a"] * 10 + ["b"] * 5)
    job.run(Committing)
    path = tmp_path / "state" / "test-job-1" / "stores" / "partition-0.duckdb"
    file = DuckDBCheckpointManager(path, "test-job", "1")
    file.register("Partition 0")
    file.start_sync()
    try:
        checkpoint = file.read_last_checkpoint_sync("Partition 0")
    finally:
        file.stop_sync()
    assert checkpoint is not None
    assert {str(s): o for s, o in checkpoint.offsets.items()} == {"test.in#0": "9"}
    assert "counts" in checkpoint.changelog_offsets
    assert store_contents(path.parent) == {"a": 10}
