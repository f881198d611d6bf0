"""Steering a running notebook job in a real IPython shell: %samza_pause, %samza_step, %samza_resume,
%samza_set, %%samza_task --swap and samza_nb.notebook.job()."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

import samza_nb.notebook
from samza_nb.notebook.display.steps import HEADERS, StepsReport
from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually

from .helpers import config_cell, error_line, run

COUNTER = """%%samza_task
class Counter:
    def init(self, context):
        self.counts = context.get_store("counts")
    def process(self, envelope, collector, coordinator):
        STEERED.append(envelope.message)
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + {by})
"""


@pytest.fixture
def running(shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker) -> Iterator[list[str]]:
    """Job 'steer' counting words of an input that never ends, 6 messages processed; yields the messages
    the task saw (in the order it saw them)."""
    seen: list[str] = []
    shell.push({"STEERED": seen})
    broker.create_stream("words", 2)
    for i, word in enumerate(["a", "b", "a", "c", "a", "b"]):
        broker.send("words", word, partition=i % 2)
    config = config_cell(broker, "words", job="steer") + (
        "stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory\n"
        "stores.counts.key.serde = string\nstores.counts.msg.serde = int\n"
    )
    assert run(shell, config).success
    assert run(shell, COUNTER.format(by=1)).success
    assert run(shell, "%samza_run").success
    eventually(lambda: len(seen) == 6, timeout=10, message="6 messages processed")
    try:
        yield seen
    finally:
        run(shell, "%samza_stop")


def send(broker: InMemoryBroker, *words: str) -> None:
    for i, word in enumerate(words):
        broker.send("words", word, partition=i % 2)


def test_a_paused_job_processes_nothing_and_steps_show_a_table(
    shell: InteractiveShell, broker: InMemoryBroker, running: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(shell, "%samza_pause").success
    assert "job 'steer' paused after" in capsys.readouterr().out
    assert samza_nb.notebook.job().paused
    send(broker, "x", "y", "z", "x", "y")  # available to the job, which must not take them
    report = shell.run_line_magic("samza_step", "3")
    assert isinstance(report, StepsReport)
    assert len(running) == 6 + 3  # exactly the three steps: nothing else while paused
    assert len(report.rows) == 3
    assert [row[3] for row in report.rows] == running[6:]
    assert all(row[1].startswith(f"{broker.namespace}.words#") for row in report.rows)
    assert all(row[5].startswith("counts[") for row in report.rows)  # each made one store write
    text = str(report)
    assert all(header in text.splitlines()[0] for header in HEADERS)
    assert "3 steps, paused again" in text
    assert report._repr_html_().count("<tr") == 4  # the header and three rows
    assert samza_nb.notebook.job().paused
    assert run(shell, "%samza_resume steer").success
    assert capsys.readouterr().out.strip() == "job 'steer' resumed"
    eventually(lambda: len(running) == 11, timeout=10, message="the rest processed after the resume")


CLICKS = """%%samza_task
class Clicks:
    def init(self, context):
        self.clicks = context.get_store("clicks")
    def process(self, envelope, collector, coordinator):
        cur = self.clicks.get(envelope.message) or {"clicks": 0}
        cur["clicks"] += 1
        self.clicks.put(envelope.message, cur)
"""


def test_steps_show_each_write_as_it_was_made(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, tmp_path: Path
) -> None:
    broker.create_stream("words", 1)
    config = config_cell(broker, "words", job="clicks", job_logged_store_base_dir=str(tmp_path)) + (
        "stores.clicks.factory = samza_nb.storage.duckdb.DuckDBStoreFactory\n"
        "stores.clicks.key.serde = string\nstores.clicks.msg.serde = json\n"
    )
    assert run(shell, config).success
    assert run(shell, CLICKS).success
    assert run(shell, "%samza_run").success
    try:
        assert run(shell, "%samza_pause").success
        for _ in range(3):
            broker.send("words", "a", partition=0)
        report = shell.run_line_magic("samza_step", "3")
        assert [(old, new) for step in report.steps for _, _, old, new in step.writes] == [
            (None, {"clicks": 1}),
            ({"clicks": 1}, {"clicks": 2}),
            ({"clicks": 2}, {"clicks": 3}),
        ]
        assert [row[5] for row in report.rows] == [
            "clicks[a]: None → {'clicks': 1}",
            "clicks[a]: {'clicks': 1} → {'clicks': 2}",
            "clicks[a]: {'clicks': 2} → {'clicks': 3}",
        ]
    finally:
        run(shell, "%samza_stop")


def test_set_shows_the_values_in_force_and_a_bad_key_is_one_line(
    shell: InteractiveShell, running: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(shell, "%samza_set task.max.concurrency=4 --name steer").success
    out = capsys.readouterr().out
    assert "task.max.concurrency = 4  (changed)" in out and "task.commit.ms = " in out
    line = error_line(run(shell, "%samza_set task.bogus=1"), capsys)
    assert line.startswith("NotebookError: samza_set: unknown key task.bogus: no config key has that name")
    assert "task.max.concurrency" in line
    line = error_line(run(shell, "%samza_set task.max.concurency=2"), capsys)
    assert line.startswith(
        "NotebookError: samza_set: unknown key task.max.concurency: did you mean task.max.concurrency?"
    )
    assert "cannot change while the job runs" not in line
    line = error_line(run(shell, "%samza_set job.name=other"), capsys)
    assert line.startswith("NotebookError: samza_set: job.name cannot change while the job runs")
    assert "is not key=value" in error_line(run(shell, "%samza_set task.max.concurrency"), capsys)


def test_step_needs_a_pause_and_names_a_known_job(
    shell: InteractiveShell, running: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert "%samza_pause steer first" in error_line(run(shell, "%samza_step"), capsys)
    assert "no job named 'ghost'" in error_line(run(shell, "%samza_pause ghost"), capsys)


def test_swap_keeps_the_store_counts(
    shell: InteractiveShell, broker: InMemoryBroker, running: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run(shell, COUNTER.format(by=100).replace("%%samza_task", "%%samza_task --swap")).success
    assert "task Counter swapped into job 'steer' after 6 messages" in capsys.readouterr().out
    assert run(shell, "%samza_pause").success
    send(broker, "a")
    report = shell.run_line_magic("samza_step", "1")
    assert len(running) == 7
    [step] = report.steps
    assert step.writes == (("counts", "a", 3, 103),)  # the old code's counts, the new code's increment


def test_a_swap_whose_init_fails_changes_nothing_and_names_the_cell_line(
    shell: InteractiveShell, broker: InMemoryBroker, running: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    broken = (
        COUNTER.format(by=100)
        .replace("%%samza_task", "%%samza_task --swap steer")
        .replace('self.counts = context.get_store("counts")', 'raise ValueError("no")')
    )
    line = error_line(run(shell, broken), capsys)
    assert line.startswith("NotebookError: samza_task --swap: swap refused: task ")
    assert 'in init() at line 4 of the %%samza_task cell: raise ValueError("no")' in line
    assert "every task keeps its old code" in line
    assert run(shell, "%samza_pause").success
    send(broker, "a")
    [step] = shell.run_line_magic("samza_step", "1").steps
    assert step.writes == (("counts", "a", 3, 4),)  # still the old code


def test_run_records_then_replays_the_same_schedule(
    shell: InteractiveShell,
    magics: SamzaMagics,
    broker: InMemoryBroker,
    tmp_path: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    seen: list[str] = []
    shell.push({"STEERED": seen})
    broker.create_stream("words", 3)
    for i, word in enumerate(["a", "b", "c", "d", "e", "f", "g", "h"]):
        broker.send("words", word, partition=i % 3)
    broker.end_stream("words")
    run(shell, config_cell(broker, "words", job="recorded"))
    run(
        shell,
        "%%samza_task\nclass Seen:\n    def process(self, envelope, collector, coordinator):\n"
        "        STEERED.append(envelope.message)\n",
    )
    recording = f"{tmp_path}/schedule"
    assert run(shell, f"%samza_run --wait --record {recording}").success
    recorded = list(seen)
    assert sorted(recorded) == list("abcdefgh")
    seen.clear()
    assert run(shell, f"%samza_run --wait --replay {recording}").success
    assert seen == recorded
    line = error_line(run(shell, "%samza_run --replay /nonexistent/recording"), capsys)
    assert line.startswith("NotebookError: samza_run: ") and "/nonexistent/recording" in line


def test_job_handle_names_what_is_missing(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(samza_nb.notebook.NotebookError, match="no job has run yet"):
        samza_nb.notebook.job()
    assert "no job has run yet" in error_line(run(shell, "%samza_resume"), capsys)


def test_record_is_for_a_job_of_one_container(
    shell: InteractiveShell,
    magics: SamzaMagics,
    broker: InMemoryBroker,
    tmp_path: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broker.create_stream("words", 2)
    run(shell, config_cell(broker, "words", job="two", job_container_count=2))
    run(
        shell,
        "%%samza_task\nclass Nothing:\n    def process(self, e, c, k):\n        pass\n",
    )
    line = error_line(run(shell, f"%samza_run --record {tmp_path}/rec"), capsys)
    assert "--record records or replays the schedule of a job of one container" in line
    assert "this job has 2 containers" in line


APP = """%%samza_app
from samza_nb.operators import StreamApplication

class Tagging(StreamApplication):
    def describe(self, app):
        stream = app.get_input_stream("words"){extra}
        stream.map(lambda m: "{tag}:" + m, op_id="tag").sink(lambda m, c, k: SEEN.append(m), "seen")
"""


def test_an_application_swaps_in_when_its_graph_keeps_its_shape(
    shell: InteractiveShell, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: list[str] = []
    shell.push({"SEEN": seen})
    broker.create_stream("words", 1)
    broker.send("words", "a")
    broker.send("words", "b")
    config = config_cell(broker, "words", job="tags") + f"job.default.system = {broker.namespace}\n"
    assert run(shell, config).success
    assert run(shell, APP.format(extra="", tag="old")).success
    assert run(shell, "%samza_run").success
    eventually(lambda: seen == ["old:a", "old:b"], timeout=10, message="the old code ran")
    capsys.readouterr()
    reshaped = APP.format(extra='.filter(lambda m: True, op_id="keep")', tag="new")
    line = error_line(run(shell, reshaped.replace("%%samza_app", "%%samza_app --swap")), capsys)
    assert "does not keep the running application's shape" in line and "op 'keep' is new" in line
    assert run(shell, APP.format(extra="", tag="new").replace("%%samza_app", "%%samza_app --swap")).success
    assert "application Tagging swapped into job 'tags' after 2 messages" in capsys.readouterr().out
    broker.send("words", "c")
    eventually(lambda: seen == ["old:a", "old:b", "new:c"], timeout=10, message="the new code ran")
    task_swap = COUNTER.format(by=1).replace("%%samza_task", "%%samza_task --swap")
    assert "runs an application; the cell defines a task" in error_line(run(shell, task_swap), capsys)
    run(shell, "%samza_stop")
