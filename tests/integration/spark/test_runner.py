"""SparkJobRunner on the session's local[2,2] Spark: the containers are the tasks of one Spark job, each a
process started by its Python worker, against the job coordinator on the driver (this process)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, ConfigError, SamzaError
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually

ROOT = Path(__file__).parents[3]
STREAMS, LINES = ("a", "b", "c", "d"), 50
TASKS = "tests.integration.spark.runner_tasks"


def file_job(tmp_path: Path, **extra: str) -> Config:
    """Four bounded file streams (one partition each: four tasks) over two containers."""
    for stream in STREAMS:
        (tmp_path / f"{stream}.txt").write_text("".join(f"{stream}{i}\n" for i in range(LINES)))
    values = {
        "job.name": f"spark-{uuid.uuid4().hex[:6]}",
        "task.class": f"{TASKS}.Record",
        "task.inputs": ",".join(f"file.{s}" for s in STREAMS),
        "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        **{f"systems.file.streams.{s}.path": str(tmp_path / f"{s}.txt") for s in STREAMS},
        "systems.file.samza.offset.default": "oldest",
        "job.systemstreampartition.grouper.factory": "group-by-ssp",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(tmp_path / "state"),
        "task.commit.ms": "100",
        "cluster-manager.container.status.interval.ms": "50",
        "test.record": str(tmp_path / "record.txt"),
    }
    values.update(extra)
    return Config(values)


def log_job(tmp_path: Path, **extra: str) -> Config:
    """The durable log's stream ``words`` (4 partitions, never ending) over two containers."""
    values = {
        "job.name": f"spark-log-{uuid.uuid4().hex[:6]}",
        "task.class": f"{TASKS}.Record",
        "task.inputs": "log.words",
        "systems.log.samza.offset.default": "oldest",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(tmp_path / "state"),
        "task.commit.ms": "100",
        "cluster-manager.container.status.interval.ms": "50",
        "test.record": str(tmp_path / "record.txt"),
    }
    values.update(extra)
    return Config(values)


def append_words(tmp_path: Path, rounds: range) -> Counter[str]:
    """``w<p>-<k>`` for k in 0..4, once per round, into partition p of ``words``; what was written."""
    log = DurableLog(tmp_path / "state" / "log")
    if not log.has_stream("words"):
        log.create_stream("words", 4)
    written: Counter[str] = Counter()
    for p in range(4):
        words = [f"w{p}-{k}" for _ in rounds for k in range(5)]
        log.send_batch("words", ((None, w.encode(), p) for w in words))
        written.update(words)
    log.flush()
    log.close()
    return written


def recorded(tmp_path: Path) -> list[tuple[str, int, str, str]]:
    """(task, pid, offset, message) of every complete line the tasks recorded."""
    path = tmp_path / "record.txt"
    if not path.exists():
        return []
    lines = [line.split(" ") for line in path.read_text().splitlines(keepends=True) if line.endswith("\n")]
    return [(t, int(pid), offset, m.rstrip("\n")) for t, pid, offset, m in (r for r in lines if len(r) == 4)]


def expected_lines() -> set[str]:
    return {f"{s}{i}" for s in STREAMS for i in range(LINES)}


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The containers import the test tasks from the repository (the driver's sys.path reaches them)."""
    monkeypatch.syspath_prepend(str(ROOT))


def container_processes(url: str) -> list[int]:
    """Pids of the processes on this machine running a container of the coordinator at ``url``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"SAMZA_COORDINATOR_URL={url}".encode() in environ.split(b"\0") and b"container" in cmdline:
            found.append(int(entry.name))
    return found


def test_four_partitions_run_in_two_containers_in_two_processes(spark: Any, tmp_path: Path) -> None:
    runner = SparkJobRunner(file_job(tmp_path), spark)
    runner.run(timeout=120)
    assert runner.failure is None
    rows = recorded(tmp_path)
    assert Counter(m for *_, m in rows) == Counter(expected_lines()), "every line once"
    assert runner.processed == len(STREAMS) * LINES
    status = runner.status()
    assert status is not None and runner.job_model is not None
    reports = status.reports
    assert set(reports) == {"0", "1"} and all(r.state == "stopped" for r in reports.values())
    assert reports["0"].pid != reports["1"].pid, "two container processes"
    pids_of_task = defaultdict(set)
    for task, pid, *_ in rows:
        pids_of_task[task.replace("_", " ")].add(pid)
    for cid, container in runner.job_model.containers.items():
        assert len(container.tasks) == 2
        for task in container.tasks:
            assert pids_of_task[task] == {reports[cid].pid}, f"{task} ran in container {cid}'s process"


def test_a_container_that_fails_once_is_retried_and_the_output_is_complete(
    spark: Any, tmp_path: Path
) -> None:
    marker = tmp_path / "failed-once"
    config = file_job(tmp_path, **{"test.fail.on": "c20", "test.fail.marker": str(marker)})
    runner = SparkJobRunner(config, spark)
    runner.run(timeout=120)
    assert runner.failure is None
    assert marker.exists(), "the first attempt failed"
    rows = recorded(tmp_path)
    assert {m for *_, m in rows} == expected_lines(), "nothing lost"
    failed_task = next(t for t, _, _, m in rows if m == "c19")
    pids = {pid for t, pid, _, _ in rows if t == failed_task}
    assert len(pids) == 2, "the container's task ran in a first attempt and in its retry"
    status = runner.status()
    assert status is not None and all(r.state == "stopped" for r in status.reports.values())
    # a retry resumes from the last checkpoint: at most the messages since then run twice
    assert runner.processed >= len(STREAMS) * LINES


def test_a_container_failing_in_every_attempt_fails_the_job_with_its_error(
    spark: Any, tmp_path: Path
) -> None:
    config = file_job(tmp_path, **{"test.fail.on": "b7", "test.fail.always": "true"})
    runner = SparkJobRunner(config, spark)
    with pytest.raises(SamzaError) as error:
        runner.run(timeout=120)
    model = runner.job_model
    assert model is not None and runner.coordinator is not None
    cid = next(c for c, m in model.containers.items() if any(", b, " in t for t in m.tasks))
    line = str(error.value)
    assert line == runner.failure
    assert line.startswith(f"container {cid} failed: ") and "cannot process 'b7'" in line, line
    assert "\n" not in line and "exited with status 1" in line
    assert container_processes(runner.coordinator.url) == []


def test_more_containers_than_task_slots_is_a_config_error(spark: Any, tmp_path: Path) -> None:
    runner = SparkJobRunner(file_job(tmp_path, **{"job.container.count": "3"}), spark)
    with pytest.raises(ConfigError) as error:
        runner.start()
    assert "job.container.count" in str(error.value)
    assert error.value.key == "job.container.count"
    assert runner.coordinator is None and runner.processed == 0


def test_stop_commits_and_leaves_no_process_running_a_container(spark: Any, tmp_path: Path) -> None:
    written = append_words(tmp_path, range(20))
    runner = SparkJobRunner(log_job(tmp_path), spark)
    runner.start()
    assert runner.coordinator is not None
    url = runner.coordinator.url

    def both_processing() -> Any:
        status = runner.status()
        reports = status.reports if status is not None else {}
        return len(reports) == 2 and all(r.processed > 0 for r in reports.values()) and reports

    reports = eventually(both_processing, timeout=90)
    pids = {r.pid for r in reports.values()}
    assert set(container_processes(url)) == pids
    eventually(lambda: {m for *_, m in recorded(tmp_path)} == set(written), timeout=60)
    runner.stop()
    assert runner.join(timeout=90)
    assert runner.failure is None and runner.stopped
    assert not runner.cancelled, "the containers stopped when the coordinator asked them to"
    assert container_processes(url) == [], "no process runs a container any more"
    status = runner.status()
    assert status is not None
    assert {r.state for r in status.reports.values()} == {"stopped"}, "each container stopped and committed"


def test_a_stateful_job_stopped_and_restarted_keeps_exact_counts(spark: Any, tmp_path: Path) -> None:
    stateful = {
        "task.class": f"{TASKS}.Count",
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "long",
        "stores.counts.changelog": "log.counts-changelog",
    }
    config = log_job(tmp_path, **stateful)
    written = append_words(tmp_path, range(3))

    def run_until_all_recorded(expected: Counter[str]) -> None:
        runner = SparkJobRunner(config, spark)
        runner.start()
        eventually(lambda: Counter(m.split("=")[0] for *_, m in recorded(tmp_path)) == expected, timeout=90)
        runner.stop()
        assert runner.join(timeout=90) and runner.failure is None

    run_until_all_recorded(written)
    # the local state files go: the restarted containers restore their stores from the changelog
    job_dir = tmp_path / "state" / f"{config.job_name()}-1"
    shutil.rmtree(job_dir / "stores")
    written += append_words(tmp_path, range(3, 7))
    run_until_all_recorded(written)

    counts: dict[str, list[int]] = defaultdict(list)
    for *_, message in recorded(tmp_path):
        word, count = message.split("=")
        counts[word].append(int(count))
    assert counts == {word: list(range(1, n + 1)) for word, n in written.items()}, "each count once, in order"
    assert os.path.exists(job_dir)


def test_task_slots_and_attempts_come_from_the_scheduler_not_default_parallelism(spark: Any) -> None:
    from samza_nb.runtime.spark.runner import task_attempts, task_slots

    assert task_slots(spark.sparkContext) == 2  # local[2,2]
    assert task_attempts(spark.sparkContext) == 2


SLOTS_SCRIPT = """
import sys
from pyspark.sql import SparkSession
from samza_nb import Config
from samza_nb.errors import ConfigError
from samza_nb.runtime.spark.runner import SparkJobRunner

spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.default.parallelism", "2").getOrCreate())
config = Config({"job.name": "slots", "task.class": "tests.integration.spark.runner_tasks.Record",
                 "task.inputs": "log.words",
                 "job.container.count": "2", "job.logged.store.base.dir": sys.argv[1]})
try:
    SparkJobRunner(config, spark).start()
except ConfigError as exc:
    print("refused:", exc.key, "|", exc)
else:
    print("accepted")
spark.stop()
"""


@pytest.mark.slow
def test_one_core_with_default_parallelism_two_still_refuses_two_containers(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SLOTS_SCRIPT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "PYSPARK_PYTHON": sys.executable},
    )
    assert "refused: job.container.count | job.container.count = 2" in done.stdout, done.stdout + done.stderr
    assert "1 task slot " in done.stdout
    assert "a failed container is not retried" in done.stderr  # local[1] runs each task once


def test_pause_and_resume_reach_the_containers_through_the_coordinator(spark: Any, tmp_path: Path) -> None:
    first = append_words(tmp_path, range(2))
    runner = SparkJobRunner(log_job(tmp_path), spark)
    runner.start()
    try:

        def seen() -> Counter[str]:
            return Counter(m for *_, m in recorded(tmp_path))

        eventually(lambda: seen() == first, timeout=90)
        runner.pause(timeout=60)
        status = runner.status()
        assert status is not None and len(status.reports) == 2
        assert all(r.paused for r in status.reports.values())
        counts = {cid: r.processed for cid, r in status.reports.items()}
        rest = append_words(tmp_path, range(2, 6))  # input waits while the job is paused

        # A knob's full round trip through both containers: alive and reporting, yet processing nothing.
        runner.set({"task.commit.ms": "200"})

        def applied() -> Any:
            now = runner.status()
            reports = now.reports.values() if now is not None else []
            return all(r.knobs.get("task.commit.ms") == "200" for r in reports) and now

        now = eventually(applied, timeout=60)
        assert {cid: r.processed for cid, r in now.reports.items()} == counts
        assert seen() == first

        runner.resume()
        eventually(lambda: seen() == first + rest, timeout=60)
    finally:
        runner.stop()
        assert runner.join(timeout=90)
    assert runner.failure is None


def test_a_container_retried_while_the_job_resets_offsets_fails_the_job_in_one_line(
    spark: Any, tmp_path: Path
) -> None:
    """A retry of a container whose tasks start over (``reset.offset``) would start them over again, in
    another output generation than the other containers': the job fails at once naming the reset stream,
    instead of leaving a current generation without the other containers' output."""
    marker = tmp_path / "failed-once"
    config = file_job(
        tmp_path,
        **{
            "test.fail.on": "c20",
            "test.fail.marker": str(marker),
            "systems.file.streams.c.samza.reset.offset": "true",
        },
    )
    runner = SparkJobRunner(config, spark)
    with pytest.raises(SamzaError) as error:
        runner.run(timeout=120)
    line = str(error.value)
    assert marker.exists(), "the first attempt failed"
    assert "\n" not in line and "retried while the job resets file.c (reset.offset)" in line, line
    assert runner.coordinator is not None and container_processes(runner.coordinator.url) == []
