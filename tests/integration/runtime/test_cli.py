"""The ``samza-nb`` command line, run as a real process (``python -m samza_nb``) in a scratch directory."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import termios
from collections import Counter
from pathlib import Path

import pytest

from samza_nb.runtime.cli.main import main
from tests.eventually import eventually

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "examples" / "wordcount"
CONSOLE_SCRIPT = Path(sys.executable).parent / "samza-nb"

RECORDING_TASK = """
import os
import time


class Task:
    \"\"\"Appends the offset of every message it processes to processed.log (flushed at once).\"\"\"

    def init(self, context):
        self.delay = float(context.config.get_str("test.delay.s", "0"))
        self.fail_at = context.config.get_str("test.fail.at", "")
        self.log = open("processed.log", "a")

    def process(self, envelope, collector, coordinator):
        if envelope.offset == self.fail_at:
            raise ValueError("boom at " + envelope.offset)
        if self.delay:
            time.sleep(self.delay)
        self.log.write(envelope.offset + "\\n")
        self.log.flush()

    def close(self):
        self.log.close()


class Stuck:
    \"\"\"Its first message never finishes within the shutdown time.\"\"\"

    async def process(self, envelope, collector, coordinator):
        import asyncio

        open("started", "w").close()
        await asyncio.sleep(60)
"""


def make_job(workdir: Path, lines: int, **extra: str) -> Path:
    """A job reading ``lines`` lines of in.txt with jobtask.Task; returns its config file."""
    (workdir / "jobtask.py").write_text(RECORDING_TASK)
    with (workdir / "in.txt").open("w") as file:
        file.writelines(f"line {i}\n" for i in range(lines))
    config = {
        "job.name": "cli-test",
        "task.class": "jobtask.Task",
        "task.inputs": "file.lines",
        "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        "systems.file.streams.lines.path": "in.txt",
        "systems.file.samza.offset.default": "oldest",
    }
    config.update(extra)
    path = workdir / "job.properties"
    path.write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    return path


def env() -> dict[str, str]:
    result = dict(os.environ)
    result.pop("PYTHONPATH", None)
    result["PYTHONWARNINGS"] = "error::ResourceWarning"
    return result


def cli(workdir: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "samza_nb", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
    )


def start(workdir: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "samza_nb", *args],
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
    )


def processed_log(workdir: Path) -> list[int]:
    path = workdir / "processed.log"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def checkpoint(stdout: str) -> int:
    match = re.search(r"file\.lines#0=(\d+)", stdout)
    assert match, stdout
    return int(match.group(1))


def one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("samza-nb: error: "), stderr
    assert "Traceback" not in stderr
    return lines[0]


# -- the example -----------------------------------------------------------------------------------------
def test_pageviews_application_example_counts_views_per_user_and_minute(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(REPO / "examples" / "__init__.py", tmp_path / "examples")
    source = REPO / "examples" / "pageviews"
    shutil.copytree(
        source, tmp_path / "examples" / "pageviews", ignore=shutil.ignore_patterns("output", "__pycache__")
    )
    result = cli(tmp_path, "run", "--config-path", "examples/pageviews/app.properties")
    assert result.returncode == 0, result.stderr
    views = [json.loads(line) for line in (source / "input" / "views.jsonl").read_text().splitlines()]
    expected = Counter((v["user"], v["ts"] // 60_000 * 60_000) for v in views if v["page"] != "/health")
    output = tmp_path / "examples" / "pageviews" / "output" / "views-per-user.txt"
    rows = [json.loads(line) for line in output.read_text().splitlines()]
    assert {(r["user"], r["minute_start"]): r["views"] for r in rows} == expected
    assert len(rows) == len(expected)
    # Every view once at the source; every kept view, then the end-of-stream control message, through the
    # intermediate stream.
    assert f"processed {len(views) + sum(expected.values()) + 1} messages" in result.stdout


def test_wordcount_example_counts_every_word_once(tmp_path: Path) -> None:
    (tmp_path / "examples").mkdir()
    shutil.copy(REPO / "examples" / "__init__.py", tmp_path / "examples")
    shutil.copytree(
        EXAMPLE, tmp_path / "examples" / "wordcount", ignore=shutil.ignore_patterns("output", "__pycache__")
    )
    args = ("run", "--config-path", "examples/wordcount/job.properties")
    result = cli(tmp_path, *args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # no TTY: no progress bar; nothing else to say
    text = (EXAMPLE / "input" / "lines.txt").read_text()
    expected = Counter(re.findall(r"[a-z]+(?:'[a-z]+)*", text.lower()))
    output = tmp_path / "examples" / "wordcount" / "output" / "counts.txt"
    records = [json.loads(line) for line in output.read_text().splitlines()]
    assert {r["word"]: r["count"] for r in records} == expected
    assert len(records) == len(expected)
    lines = text.count("\n")
    assert f"processed {lines} messages" in result.stdout
    assert checkpoint(result.stdout) == lines - 1
    assert (tmp_path / ".samza_nb" / "state" / "wordcount-1" / "samza.duckdb").exists()

    # Run again (with the console script when installed): it resumes after the checkpoint, nothing new.
    command = [str(CONSOLE_SCRIPT)] if CONSOLE_SCRIPT.exists() else [sys.executable, "-m", "samza_nb"]
    again = subprocess.run(
        [*command, *args], cwd=tmp_path, capture_output=True, text=True, timeout=60, env=env()
    )
    assert again.returncode == 0, again.stderr
    assert "processed 0 messages" in again.stdout
    assert checkpoint(again.stdout) == lines - 1
    assert [json.loads(line) for line in output.read_text().splitlines()] == records


# -- limits, signals, resume -----------------------------------------------------------------------------
def test_max_messages_stops_early_and_a_rerun_resumes_exactly_after_the_checkpoint(tmp_path: Path) -> None:
    config = make_job(tmp_path, 5000)
    first = cli(tmp_path, "run", "--config-path", str(config), "--max-messages", "1234")
    assert first.returncode == 0, first.stderr
    assert "processed 1234 messages" in first.stdout
    assert checkpoint(first.stdout) == 1233
    assert "--max-messages 1234" in first.stderr
    assert processed_log(tmp_path) == list(range(1234))

    second = cli(tmp_path, "run", "--config-path", str(config))
    assert second.returncode == 0, second.stderr
    assert "processed 3766 messages" in second.stdout
    assert checkpoint(second.stdout) == 4999
    assert processed_log(tmp_path) == list(range(5000))  # none twice, none lost


def test_sigterm_stops_gracefully_commits_and_the_rerun_continues(tmp_path: Path) -> None:
    config = make_job(tmp_path, 100_000, **{"test.delay.s": "0.001"})
    job = start(tmp_path, "run", "--config-path", str(config))
    try:
        eventually(lambda: len(processed_log(tmp_path)) >= 50, message="50 messages processed")
        job.send_signal(signal.SIGTERM)
        stdout, stderr = job.communicate(timeout=30)
    finally:
        job.kill()
    assert job.returncode == 0, stderr
    assert "SIGTERM" in stderr and "Traceback" not in stderr
    last = checkpoint(stdout)
    assert 50 <= last < 99_999
    assert processed_log(tmp_path) == list(range(last + 1))

    rerun = cli(
        tmp_path, "run", "--config-path", str(config), "--max-messages", "100", "--set", "test.delay.s=0"
    )
    assert rerun.returncode == 0, rerun.stderr
    assert checkpoint(rerun.stdout) == last + 100
    assert processed_log(tmp_path) == list(range(last + 101))


def test_second_interrupt_forces_the_stop(tmp_path: Path) -> None:
    config = make_job(tmp_path, 10, **{"task.class": "jobtask.Stuck", "task.shutdown.ms": "60000"})
    job = start(tmp_path, "run", "--config-path", str(config))
    try:
        eventually(lambda: (tmp_path / "started").exists(), message="the stuck task started")
        job.send_signal(signal.SIGINT)
        assert job.stderr is not None
        first = ""
        while "stopping gracefully" not in first:  # the first interrupt is handled: the next one forces
            line = job.stderr.readline()
            assert line, f"the job ended before saying it stops gracefully: {first}"
            first += line
        job.send_signal(signal.SIGINT)
        _, rest = job.communicate(timeout=20)
        stderr = first + rest
    finally:
        job.kill()
    assert job.returncode == 130, stderr
    assert "stopping gracefully" in stderr and "forc" in stderr
    assert "Traceback" not in stderr


def test_timeout_is_a_run_limit_not_an_error(tmp_path: Path) -> None:
    config = make_job(tmp_path, 100_000, **{"test.delay.s": "0.001", "job.container.thread.pool.size": "1"})
    result = cli(tmp_path, "run", "--config-path", str(config), "--timeout", "0.5")
    assert result.returncode == 0, result.stderr
    assert "--timeout 0.5 s" in result.stderr
    last = checkpoint(result.stdout)
    assert processed_log(tmp_path) == list(range(last + 1))


# -- errors ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("override", "named"),
    [
        ("task.max.concurrency=abc", ["task.max.concurrency", "'abc'"]),
        ("task.class=no_such_module.Task", ["task.class", "no_such_module.Task"]),
        ("systems.file.samza.factory=samza_nb.systems.nope.Factory", ["systems.file.samza.factory", "nope"]),
        (
            "stores.s.factory=samza_nb.storage.duckdb.DuckDBStoreFactori",
            [
                "stores.s.factory='samza_nb.storage.duckdb.DuckDBStoreFactori'",
                "did you mean samza_nb.storage.duckdb.DuckDBStoreFactory?",
            ],
        ),
        ("stores.s.key.serde=strng", ["stores.s.key.serde='strng' is not a serde", "did you mean string?"]),
    ],
)
def test_config_errors_are_one_line_and_exit_2(tmp_path: Path, override: str, named: list[str]) -> None:
    config = make_job(tmp_path, 10)
    result = cli(tmp_path, "run", "--config-path", str(config), "--set", override)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result.stderr)
    for text in named:
        assert text in line
    assert result.stdout == ""


def test_an_unknown_key_near_a_known_one_is_an_error_naming_the_key_it_resembles(tmp_path: Path) -> None:
    config = make_job(tmp_path, 10, **{"task.max.concurency": "4", "test.delay.s": "0"})
    for strict in ([], ["--strict"]):  # --strict is accepted, and changes nothing
        result = cli(tmp_path, "run", "--config-path", str(config), *strict)
        assert result.returncode == 2, result.stderr
        assert one_error_line(result.stderr) == (
            "samza-nb: error: unknown key task.max.concurency: did you mean task.max.concurrency?"
        )
        assert processed_log(tmp_path) == []
    config.write_text(config.read_text().replace("task.max.concurency = 4\n", ""))
    result = cli(tmp_path, "run", "--config-path", str(config), "--set", "task.comit.ms=5")
    assert result.returncode == 2, result.stderr
    assert "task.comit.ms: did you mean task.commit.ms?" in one_error_line(result.stderr)
    result = cli(tmp_path, "run", "--config-path", str(config), "--set", "myapp.greeting=hi")
    assert result.returncode == 0, result.stderr  # a key of the user's own, far from every known one
    assert processed_log(tmp_path) == list(range(10))


def test_a_missing_task_class_key_names_it(tmp_path: Path) -> None:
    config = make_job(tmp_path, 10)
    config.write_text(config.read_text().replace("task.class = jobtask.Task\n", ""))
    result = cli(tmp_path, "run", "--config-path", str(config))
    assert result.returncode == 2
    assert "task.class" in one_error_line(result.stderr)


def test_verbose_shows_the_traceback(tmp_path: Path) -> None:
    config = make_job(tmp_path, 10)
    result = cli(tmp_path, "run", "--config-path", str(config), "--verbose", "--set", "task.class=nope.Task")
    assert result.returncode == 2
    assert "Traceback" in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("samza-nb: error: task.class=")


def test_a_failing_task_exits_1_with_one_line(tmp_path: Path) -> None:
    config = make_job(tmp_path, 100, **{"test.fail.at": "42"})
    result = cli(tmp_path, "run", "--config-path", str(config))
    assert result.returncode == 1
    line = one_error_line(result.stderr)
    assert "boom at 42" in line and "Partition 0" in line
    assert processed_log(tmp_path) == list(range(42))
    assert "processed 42 messages" in result.stdout


def test_missing_input_file_and_config_file(tmp_path: Path) -> None:
    config = make_job(tmp_path, 1)
    (tmp_path / "in.txt").unlink()
    result = cli(tmp_path, "run", "--config-path", str(config))
    assert result.returncode == 1
    assert "in.txt" in one_error_line(result.stderr)

    result = cli(tmp_path, "run", "--config-path", "missing.properties")
    assert result.returncode == 2
    assert "missing.properties" in one_error_line(result.stderr)


# -- progress bar ----------------------------------------------------------------------------------------
def run_on_tty(workdir: Path, *args: str) -> tuple[int, str]:
    """Run with stderr on a pseudo-terminal; returns the exit status and what the terminal showed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    job = subprocess.Popen(
        [sys.executable, "-m", "samza_nb", *args],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=slave,
        env=env(),
    )
    os.close(slave)
    shown = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 30)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
        status = job.wait(timeout=30)
    finally:
        job.kill()
        os.close(master)
    return status, shown.decode("utf-8", "replace")


def test_progress_bar_on_a_terminal_and_no_progress(tmp_path: Path) -> None:
    config = make_job(tmp_path, 3000, **{"test.delay.s": "0.0002", "job.container.thread.pool.size": "1"})
    status, shown = run_on_tty(tmp_path, "run", "--config-path", str(config), "--max-messages", "2000")
    assert status == 0
    assert "cli-test" in shown and "msg" in shown and "2.00k" in shown
    status, shown = run_on_tty(tmp_path, "run", "--config-path", str(config), "--no-progress")
    assert status == 0
    assert "msg/s" not in shown


# -- in process ------------------------------------------------------------------------------------------
def test_main_in_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    config = make_job(tmp_path, 20)
    assert main(["run", "--config-path", str(config), "--set", "job.name=inproc", "test.delay.s=0"]) == 0
    out, _ = capsys.readouterr()
    assert re.match(
        r"samza-nb: inproc: processed 20 messages in [\d.]+ s \([\d,]+ msgs/s\); checkpoints: "
        r"Partition 0 \[file\.lines#0=19\]$",
        out.strip(),
    ), out
    assert main(["run", "--config-path", str(config), "--set", "novalue"]) == 2
    assert "--set 'novalue': expected KEY=VALUE" in capsys.readouterr().err
    assert main([]) == 2
    assert "run" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["run", "--config-path", str(config), "--max-messages", "0"])
    assert info.value.code == 2
    assert "--max-messages" in capsys.readouterr().err
