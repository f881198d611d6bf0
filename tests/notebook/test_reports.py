"""%samza_status and %samza_checkpoints: what they return and how they render."""

from __future__ import annotations

import asyncio
import html
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.coordinator.status import ContainerReport, JobStatus
from samza_nb.notebook.display.containers_monitor import ContainersMonitor, containers_starting
from samza_nb.notebook.display.monitor import decision_reason
from samza_nb.notebook.display.text_status import render_html, render_text
from samza_nb.notebook.display.views import JobView
from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.notebook.runs import processes_job
from samza_nb.observe.states import ContainerState, RunOutcome
from samza_nb.systems.inmemory.system import InMemoryBroker
from samza_nb.systems.log import DurableLog
from tests.eventually import aeventually, eventually

from .helpers import config_cell, error_line, fill, run

PASS = "%%samza_task\nclass Pass:\n    def process(self, e, c, k):\n        pass\n"


def test_status_before_any_run_says_what_is_missing(shell: InteractiveShell, magics: SamzaMagics) -> None:
    status = shell.run_line_magic("samza_status", "")
    assert status.state == "no job" and status.processed == 0
    assert str(status) == (
        "no job has run yet in this notebook\nconfig: none (%%samza_config)\n"
        "task: none (%%samza_task, or task.class)"
    )


def test_status_after_a_run(shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker) -> None:
    fill(broker, "in", 3, 30)
    run(shell, config_cell(broker, "in", job="stat"))
    run(shell, PASS)
    run(shell, "%samza_run --wait")
    status = shell.run_line_magic("samza_status", "")
    assert status.state == "finished" and status.processed == 30
    text = str(status)
    assert text.startswith("job 'stat' — finished (on its own thread) · 30 processed")
    assert "Partition 2  0/1        1/1   10         —                 —             done" in text
    html = status._repr_html_()
    assert html.count("<table") >= 2 and "Partition 1" in html


def test_status_names_the_messages_before_an_upcoming_start(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "clicks", 2, 519)
    cell = config_cell(broker, "clicks", job="late").replace(
        f"systems.{broker.namespace}.samza.offset.default = oldest\n", ""
    )
    run(shell, cell)
    run(shell, PASS)
    run(shell, "%samza_run --wait")
    status = shell.run_line_magic("samza_status", "")
    assert status.processed == 0
    system = broker.namespace
    note = (
        f"519 messages before the start of {system}.clicks: set systems.{system}.samza.offset.default = "
        "oldest to read them"
    )
    assert note in str(status)
    assert note in status._repr_html_()


def test_checkpoints_in_memory_with_history(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 2, 6)
    run(shell, config_cell(broker, "in", job="cp"))
    run(shell, PASS)
    run(shell, "%samza_run --wait")
    report = shell.run_line_magic("samza_checkpoints", "")
    ssp0 = SystemStreamPartition(broker.namespace, "in", 0)
    assert report.offset("Partition 0", ssp0) == "2"
    assert report.source == "in memory, kept for this kernel"
    assert len(report.history) == 2
    text = str(report)
    assert f"Partition 0  {broker.namespace}.in#0  2" in text
    assert "written by the latest run (newest first):" in text
    assert "<table" in report._repr_html_()


def test_checkpoints_from_a_configured_factory(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, tmp_path: Path
) -> None:
    fill(broker, "in", 1, 5)
    cell = (
        config_cell(
            broker,
            "in",
            job="durable",
            task_checkpoint_factory="samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory",
        )
        + f"job.logged.store.base.dir = {tmp_path}\n"
    )
    run(shell, cell)
    run(shell, PASS)
    assert shell.run_line_magic("samza_checkpoints", "").note == "no run yet: its tasks are not known"
    run(shell, "%samza_run --wait")
    report = shell.run_line_magic("samza_checkpoints", "")
    assert report.source == "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory"
    assert report.offsets == {"Partition 0": {SystemStreamPartition(broker.namespace, "in", 0): "4"}}


def test_reset_while_running_is_refused(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 3, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, PASS)
    run(shell, "%samza_run")
    capsys.readouterr()
    result = run(shell, "%samza_checkpoints --reset")
    assert "job 'nbjob' is running: %samza_stop nbjob before --reset" in error_line(result, capsys)
    run(shell, "%samza_stop")


def test_decision_reasons() -> None:
    from samza_nb.api.streams import SystemStream
    from samza_nb.chooser.trace import ChoiceTrace

    ssp = SystemStreamPartition("s", "a", 0)
    assert decision_reason(None) == "chosen"
    assert decision_reason(ChoiceTrace(ssp, "1", None, (), False, False)) == "round robin"
    assert decision_reason(ChoiceTrace(ssp, "1", 2, ((ssp, 2), (ssp, 1)), False, True)) == (
        "continues a batch; priority tier 2 (1 of 2 waiting)"
    )
    lagging = ChoiceTrace(ssp, "1", 0, (), True, False, (SystemStream("s", "boot"),))
    assert decision_reason(lagging) == "bootstrapping (s.boot not caught up); priority tier 0"


def test_the_note_names_the_stream_level_offset_key_when_that_one_is_in_force(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "clicks", 1, 5)
    system = broker.namespace
    cell = (
        config_cell(broker, "clicks", job="late2")
        + f"systems.{system}.streams.clicks.samza.offset.default = upcoming\n"
    )
    run(shell, cell)
    run(shell, PASS)
    run(shell, "%samza_run --wait")
    note = (
        f"5 messages before the start of {system}.clicks: set "
        f"systems.{system}.streams.clicks.samza.offset.default = oldest to read them"
    )
    assert note in str(shell.run_line_magic("samza_status", ""))


SLOW_SYNC = (
    "%%samza_task\nclass Slow:\n    def process(self, e, c, k):\n        sum(range(20_000))  # some work\n"
)


def test_status_of_a_sync_task_says_processing_then_idle(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    """A sync task runs between two views, so it never has a callback in flight when one is taken: its
    phase comes from what it did since the last view, not from the in-flight count."""
    magics.refresh_interval = 0.05
    fill(broker, "backlog", 1, 3000, end=False)
    run(shell, config_cell(broker, "backlog", job="sync"))
    run(shell, SLOW_SYNC)
    run(shell, "%samza_run")
    session = magics.session

    def phase_while(condition: Callable[[JobView], bool]) -> str:
        def seen() -> str | None:
            view = session.view
            return view.tasks[0].phase if view is not None and view.tasks and condition(view) else None

        return str(eventually(seen, timeout=30))

    # Working through its backlog: "processing", with nothing in flight.
    assert (
        phase_while(lambda view: 0 < view.processed < 2500 and bool(view.partitions[0].lag)) == "processing"
    )
    # Caught up, its input has not ended: nothing to do.
    assert phase_while(lambda view: view.processed == 3000 and view.tasks[0].phase != "processing") == "idle"
    status = str(shell.run_line_magic("samza_status", ""))
    assert re.search(r"^Partition 0 +0/1 +1/1 +3,000 .* idle$", status, re.M), status
    run(shell, "%samza_stop")


def test_a_starting_job_of_several_containers_says_what_it_waits_for(tmp_path: Path) -> None:
    """Until its coordinator runs, then until every container reported, a job of several containers says
    what it waits for in its view's notes (which the dashboard's header and the text status show)."""
    DurableLog(tmp_path / "log").create_stream("pages", 2)
    values = {
        "job.name": "phases",
        "task.inputs": "log.pages",
        "task.class": "tests.unit.runtime.multi_tasks.Record",
        "job.container.count": "2",
        "job.logged.store.base.dir": str(tmp_path),
    }
    job = processes_job.prepare(Config(values), None)
    monitor = ContainersMonitor(job, name="phases", mode="as 2 container processes", refresh_s=0.01)

    async def while_starting() -> JobView:
        monitor.start()  # the job itself is not started: its coordinator is not running
        view = await aeventually(lambda: monitor.view if monitor.view.notes else None, timeout=10)
        await monitor.finish(RunOutcome.STOPPED, None)
        return view

    view = asyncio.run(while_starting())
    note = "starting: the job coordinator (it reads the inputs' partitions and plans the job model)"
    assert view.state == "starting" and view.notes == (note,)
    assert note in render_text(view) and html.escape(note) in render_html(view)
    assert monitor.view.notes == ()  # the last view (stopped) has none

    status = JobStatus("phases", ("0", "1"))
    assert containers_starting(status, 2, "Spark tasks") == (
        "2 containers as Spark tasks (each starts Python, imports samza_nb and the task, and asks the job "
        "coordinator for the job model)"
    )
    status.take(ContainerReport("0", "host", ContainerState.RUNNING, 0))
    assert containers_starting(status, 2, "Spark tasks") == (
        "1 of 2 containers running; the others start (their stores, their inputs)"
    )


def _time_view() -> JobView:
    from samza_nb.notebook.display.event_time.views import OperatorTimeView, PartitionTimeView, TimeView

    held = SystemStreamPartition("demo", "clicks", 1)
    middle = SystemStreamPartition("demo", "clicks-1-partition_by-by-user", 1)
    time = TimeView(
        partitions=(
            PartitionTimeView("Partition 1", held, False, 1000, 4000, 3000, 2.5, holds_back=True),
            PartitionTimeView("Partition 1", middle, True, 1000, 1000, 0, 0.1, (("Partition 0", 4000),)),
        ),
        operators=(OperatorTimeView("Partition 1", "input:clicks", "input", 1000, 1000),),
        holding_back=("demo.clicks#1 (task Partition 1) holds back the watermark at 1,000 ms",),
    )
    return JobView("clicks", "on its own thread", ContainerState.RUNNING, time=time)


def test_the_status_shows_event_time_from_the_time_view_in_one_place() -> None:
    """The watermarks are the event time section's (the old "event-time watermarks" table is folded into
    it): the text and HTML status show its holding line and its partitions table; the dashboard's body has
    the section, each table in a box of its own, the long notes wrapping."""
    from samza_nb.notebook.display.dashboard_html import body_html

    view = _time_view()
    text = render_text(view)
    assert "event-time watermarks" not in text
    assert "event time:\ndemo.clicks#1 (task Partition 1) holds back the watermark at 1,000 ms\n" in text
    row = r"Partition 1\s+demo\.clicks#1\s+1,000\s+4,000\s+3,000 ms\s+2\.5 s ago\s+holds back"
    assert re.search(row, text)
    assert "operators and open windows: %samza_time" in text
    status = render_html(view)
    assert "samza-watermarks" not in status and "samza-time-partitions" in status
    body = body_html(view)
    assert "samza-watermarks" not in body and "event-time watermarks" not in body
    assert body.count("class='samza-time-box'") == 2  # partitions and operators (no open windows)
    note = re.search(r"<td style='([^']*)'>holds back the watermark</td>", body)
    assert note is not None and "white-space:normal" in note.group(1)
