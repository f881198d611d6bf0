"""Applications run by ``samza-nb run`` (app.class) on the durable log, with bounded file inputs: they stop
by themselves, also split into a job per stage; after a kill -9 the restarted job still stops and its sink
saw every message; a restarted consumer needs end-of-stream only from the producers it had not heard from
(its bookkeeping was restored)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, ConfigError, SamzaError
from samza_nb.control.messages import EndOfStreamMessage, is_control_message
from samza_nb.control.serde import PickleIntermediateMessageSerde
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor
from samza_nb.runtime import LocalJobRunner
from samza_nb.runtime.applications import JobProgram, NoJobProgramError, load_task_factory, what_job_runs
from samza_nb.systems.log import DurableLog
from tests.eventually import eventually
from tests.integration.runtime.test_multi_container import ROOT

APP = """
import os
import time

from samza_nb.api.task import RequestScope
from samza_nb.operators import StreamApplication


def pause(variable):
    seconds = float(os.environ.get(variable, "0"))
    if seconds:
        time.sleep(seconds)


def slow_b(message):
    if message == os.environ.get("FAIL_ON"):
        raise ValueError(f"cannot take {message}")
    if message.startswith("b"):
        pause("B_SLEEP")
    return message


def record(kv, collector, coordinator):
    with open("seen.txt", "a") as seen:
        seen.write(kv.value + "\\n")
    pause("SINK_SLEEP")
    if os.environ.get("COMMIT_EACH"):
        coordinator.commit(RequestScope.CURRENT_TASK)  # before the next message starts


class Repartition(StreamApplication):
    \"\"\"Lines of files a and b by their first letter, to a sink and to out.\"\"\"

    def describe(self, app):
        lines = app.get_input_stream("a").merge(app.get_input_stream("b")).map(slow_b)
        keyed = lines.partition_by(lambda line: line[0], op_id="by-key")
        keyed.sink(record, "sink")
        keyed.map(lambda kv: kv.value).send_to(app.get_output_stream("out"))
"""


def workdir_for(tmp_path: Path, a: int, b: int, **extra: Any) -> Path:
    """A working directory with the application module, files a and b, and job.properties."""
    module = f"app_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(APP))
    (tmp_path / "a.txt").write_text("".join(f"a{i}\n" for i in range(a)))
    (tmp_path / "b.txt").write_text("".join(f"b{i}\n" for i in range(b)))
    config = {
        "app.class": f"{module}.Repartition",
        "job.name": "clicks",
        "systems.files.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        "systems.files.streams.a.path": "a.txt",
        "systems.files.streams.b.path": "b.txt",
        "systems.files.samza.offset.default": "oldest",
        "streams.a.samza.system": "files",
        "streams.b.samza.system": "files",
        "streams.out.samza.system": "files",
        "job.logged.store.base.dir": "state",
        "job.intermediate.stream.partitions": "2",
        **extra,
    }
    (tmp_path / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return tmp_path


def command(*overrides: str) -> list[str]:
    """``samza-nb run`` of job.properties with ``overrides``; stopped after 30 s (the job should stop by
    itself well before: a run that does not says so on stderr)."""
    sets = ["--set", *overrides] if overrides else []
    run = [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"]
    return [*run, "--timeout", "30", *sets]


def environment(**variables: str) -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), **variables)


def run(workdir: Path, *overrides: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """Run the job to its end: it must stop by itself (exit 0, not stopped by --timeout)."""
    done = subprocess.run(
        command(*overrides),
        cwd=workdir,
        env=environment(**variables),
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr
    assert "--timeout" not in done.stderr, f"the job did not stop by itself: {done.stderr}"
    return done


def start(workdir: Path, *overrides: str, **variables: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command(*overrides),
        cwd=workdir,
        env=environment(**variables),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def expected(a: int, b: int) -> Counter[str]:
    return Counter([*(f"a{i}" for i in range(a)), *(f"b{i}" for i in range(b))])


def test_40_bounded_messages_through_partition_by_on_the_durable_log_stop_by_themselves(
    tmp_path: Path,
) -> None:
    workdir = workdir_for(tmp_path, 15, 25)
    done = run(workdir)
    assert Counter(lines(workdir / "output" / "out.txt")) == expected(15, 25)
    assert Counter(lines(workdir / "seen.txt")) == expected(15, 25)
    assert "clicks: processed" in done.stdout


def test_a_split_application_runs_a_job_per_stage_until_all_stopped(tmp_path: Path) -> None:
    workdir = workdir_for(tmp_path, 15, 25)
    done = run(workdir, "app.split.jobs=true")
    assert Counter(lines(workdir / "output" / "out.txt")) == expected(15, 25)
    assert "clicks-stage-0/Partition 0" in done.stdout and "clicks-stage-1/Partition 1" in done.stdout
    assert sorted(p.name for p in (workdir / "state").iterdir() if p.name != "log") == [
        "clicks-stage-0-1",
        "clicks-stage-1-1",
    ]


@pytest.mark.parametrize("split", [False, True])
def test_a_finished_job_run_again_after_its_input_grew_takes_the_new_lines(
    tmp_path: Path, split: bool
) -> None:
    # Source end-of-stream comes again on every start: remembering the last run's would end the operators
    # at once and stop the job with its new lines unread.
    workdir = workdir_for(tmp_path, 3, 4)
    overrides = ("app.split.jobs=true",) if split else ()
    run(workdir, *overrides)
    with (workdir / "a.txt").open("a") as more:
        more.write("".join(f"a{i}\n" for i in range(3, 8)))
    run(workdir, *overrides)
    assert Counter(lines(workdir / "seen.txt")) == expected(8, 4)
    assert Counter(lines(workdir / "output" / "out.txt")) == expected(8, 4)


def test_after_a_kill_9_the_restarted_job_stops_and_its_sink_saw_every_message(tmp_path: Path) -> None:
    workdir = workdir_for(tmp_path, 20, 20, **{"task.commit.ms": "100"})
    first = start(workdir, SINK_SLEEP="0.03", B_SLEEP="0.01", COMMIT_EACH="1")
    eventually(
        lambda: len(lines(workdir / "seen.txt")) >= 10, timeout=30, message="a quarter of the messages"
    )
    os.kill(first.pid, signal.SIGKILL)
    first.communicate(timeout=30)
    assert Counter(lines(workdir / "seen.txt")) != expected(20, 20), "the kill came before the end"

    run(workdir)
    assert set(lines(workdir / "seen.txt")) == set(expected(20, 20)), "every message at least once"


def test_a_restarted_consumer_waits_only_for_producers_it_had_not_heard_from(tmp_path: Path) -> None:
    # Two producer tasks (a and b, grouped by partition of each stream) and one intermediate partition.
    workdir = workdir_for(
        tmp_path,
        5,
        35,
        **{
            "job.systemstreampartition.grouper.factory": "group-by-ssp",
            "job.intermediate.stream.partitions": "1",
            "task.commit.ms": "50",
        },
    )
    # Stage 0 runs to its end: the intermediate stream holds a's end-of-stream well before b's.
    run(workdir, "app.stage=0", B_SLEEP="0.02")
    records = intermediate_records(workdir)
    ends = [offset for offset, m in records if isinstance(m, EndOfStreamMessage)]
    assert [m.task_name for _, m in records if is_control_message(m)] == [
        "SystemStreamPartition [files, a, 0]",
        "SystemStreamPartition [files, b, 0]",
    ]
    before_a_ended = sum(1 for offset, m in records if offset < ends[0] and not is_control_message(m))

    # Stage 1 is killed once a's end-of-stream is committed: the sink commits after each message, and the
    # next one starts only once that commit is done, so two messages after a's end were committed.
    first = start(workdir, "app.stage=1", SINK_SLEEP="0.05", COMMIT_EACH="1")
    eventually(
        lambda: len(lines(workdir / "seen.txt")) >= before_a_ended + 3, timeout=30, message="past a's end"
    )
    os.kill(first.pid, signal.SIGKILL)
    first.communicate(timeout=30)
    assert len(lines(workdir / "seen.txt")) < 40, "the kill came before the end"

    # Stage 0 does not run again: a's end-of-stream is never sent again. The restarted consumer resumes
    # after it and stops on b's alone, because it restored that it had a's.
    run(workdir, "app.stage=1")
    assert set(lines(workdir / "seen.txt")) == set(expected(5, 35))


def intermediate_records(workdir: Path) -> list[tuple[int, Any]]:
    """(offset, decoded message) of partition 0 of the intermediate stream."""
    serde = PickleIntermediateMessageSerde()  # the default of app.intermediate.serde
    with DurableLog(workdir / "state" / "log") as log:
        return [
            (offset, serde.from_bytes(value))
            for offset, _, value in log.read("clicks-1-partition_by-by-key", 0)
        ]


def test_a_failing_stage_stops_the_other_stages_and_fails_the_run(tmp_path: Path) -> None:
    # Stage 0 fails on b3, before its end-of-stream: stage 1 would wait for it until --timeout (30 s).
    workdir = workdir_for(tmp_path, 15, 25)
    failed = subprocess.run(
        command("app.split.jobs=true"),
        cwd=workdir,
        env=environment(FAIL_ON="b3"),
        capture_output=True,
        text=True,
        timeout=25,  # well before --timeout: the failure stopped stage 1
    )
    assert failed.returncode == 1, failed.stderr
    error = failed.stderr.strip().splitlines()[-1]
    assert "error: task 'Partition 0' failed in process at files.b#0 offset 3" in error
    assert "cannot take b3" in error
    assert "clicks-stage-1/Partition 1" in failed.stdout  # the summary of both jobs


# -- in this process --------------------------------------------------------------------------------------
def test_local_job_runner_plans_an_application_named_by_app_class(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workdir = workdir_for(tmp_path, 3, 4)
    monkeypatch.chdir(workdir)
    monkeypatch.setattr(sys, "path", list(sys.path))
    config = Config(
        dict(line.split(" = ", 1) for line in (workdir / "job.properties").read_text().splitlines())
    )
    runner = LocalJobRunner(config)
    assert runner.container is None and runner.processed == 0  # planned when the run starts
    runner.run(timeout=30)
    assert Counter(lines(workdir / "output" / "out.txt")) == expected(3, 4)
    assert runner.config["app.plan"] and runner.config.get_list("task.inputs")[:2] == ["files.a", "files.b"]
    with pytest.raises(ConfigError, match="runs as 2 jobs") as info:
        LocalJobRunner(config.with_overrides({"app.split.jobs": "true"})).run(timeout=30)
    assert info.value.key == "app.split.jobs"


def test_a_job_names_a_task_or_an_application() -> None:
    with pytest.raises(ConfigError, match="task.class and app.class are both set") as both:
        what_job_runs(Config({"task.class": "a.B", "app.class": "a.C"}))
    assert both.value.key == "app.class"
    with pytest.raises(NoJobProgramError, match="task.class .* or app.class") as info:
        what_job_runs(Config({}))
    assert isinstance(info.value, ConfigError) and info.value.key == "task.class"
    with pytest.raises(ConfigError, match="app.class='json.JSONDecoder' is not a StreamApplication"):
        load_task_factory(Config({"app.class": "json.JSONDecoder"}))


class Echo(StreamApplication):
    """Input a to output b."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        app.get_input_stream("a").send_to(app.get_output_stream("b"))


def test_what_a_job_runs_is_decided_from_the_config_and_imported_when_needed() -> None:
    task = what_job_runs(Config({"task.class": "no_such_module.Task"}))  # not imported yet
    assert not task.runs_application and not task.needs_planning
    with pytest.raises(ConfigError, match="no_such_module") as info:
        task.task_factory()
    assert info.value.key == "task.class"
    app = what_job_runs(Config({"app.class": f"{__name__}.Echo"}))
    assert app.runs_application and app.needs_planning and app.application is Echo
    planned = what_job_runs(Config({"app.class": f"{__name__}.Echo", "app.plan": "{}"}))
    assert planned.planned and not planned.needs_planning
    given = JobProgram.of(Echo())
    assert given.runs_application and given.needs_planning
    with pytest.raises(SamzaError, match="runs a task"):
        _ = JobProgram.of(lambda: None).application


def test_a_split_application_runs_each_job_as_container_processes(tmp_path: Path) -> None:
    # Two tasks in each stage (one per file; one per intermediate partition), two containers per job.
    workdir = workdir_for(
        tmp_path,
        15,
        25,
        **{"job.systemstreampartition.grouper.factory": "group-by-ssp", "job.container.count": "2"},
    )
    done = run(workdir, "app.split.jobs=true")
    assert Counter(lines(workdir / "output" / "out.txt")) == expected(15, 25)
    assert "clicks: processed" in done.stdout and "clicks-stage-1/SystemStreamPartition [log," in done.stdout
