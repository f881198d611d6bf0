"""JobRun's end, whatever happens around it; and the rewrite of ``%samza_run --wait`` into an await (which
expands the cell's variables as the magic does)."""

from __future__ import annotations

import asyncio
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.config import Config
from samza_nb.notebook.display.views import JobView
from samza_nb.notebook.magics.awaiting import WaitRewriter
from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.notebook.runs.cell_output import MAX_CHARS, CellOutput, RoutedStream
from samza_nb.notebook.runs.job import JobRun
from samza_nb.systems.inmemory.system import InMemoryBroker

from .helpers import config_cell, run


class QuickJob:
    """A job that ends at once (or after ``hold`` is set, when given)."""

    def __init__(self) -> None:
        self.config = Config({})
        self.job_model = None

    async def run(self) -> None:
        await asyncio.sleep(0)

    def shutdown(self) -> None:
        pass


class BrokenMonitor:
    """A monitor whose last view fails (``finish`` raises)."""

    def __init__(self) -> None:
        self.listeners: list[Any] = []
        self.view = JobView("quick", "here", "running", processed=3)
        self.decisions: Sequence[Any] = ()

    def start(self) -> None:
        pass

    async def finish(self, outcome: str, error: str | None) -> JobView:
        raise RuntimeError("the systems are gone")


def test_a_run_whose_last_view_fails_still_ends() -> None:
    run = JobRun.on_thread(QuickJob(), BrokenMonitor())
    assert run.join(10), "the run never became done"
    assert run.outcome == "finished"
    assert run.view.done and run.view.state == "finished" and run.view.processed == 3


class StuckStart(BrokenMonitor):
    def start(self) -> None:
        raise RuntimeError("no loop for the monitor")


def test_a_run_whose_monitor_cannot_start_ends_failed() -> None:
    run = JobRun.on_thread(QuickJob(), StuckStart())
    assert run.join(10)
    assert run.outcome == "failed" and run.view.done
    assert "no loop for the monitor" in str(run.error)


def _rewritten(shell: InteractiveShell, cell: str) -> str:
    rewriter = WaitRewriter(shell)
    shell.input_transformers_post.append(rewriter)
    try:
        return shell.transform_cell(cell)
    finally:
        shell.input_transformers_post.remove(rewriter)


def test_only_top_level_waits_are_rewritten_into_awaits(shell: InteractiveShell) -> None:
    assert shell.autoawait
    top = _rewritten(shell, "%samza_run --wait --timeout 5  # a comment\n")
    assert top.startswith("(await __import__('samza_nb.notebook.magics.awaiting'")
    assert "run_and_wait(get_ipython(), '--wait --timeout 5  # a comment')" in top
    assert "await" in _rewritten(shell, "if True:\n    x = %samza_run --wait\n")
    for untouched in (
        "%samza_run\n",  # no --wait
        "%samza_run  # --wait only in a comment\n",
        "def go():\n    %samza_run --wait\n",  # await is not allowed in a function
        "f = lambda: get_ipython().run_line_magic('samza_run', '--wait')\n",
        "text = \"get_ipython().run_line_magic('samza_run', '--wait')\"\n",  # a string, not a call
    ):
        assert "await" not in _rewritten(shell, untouched), untouched


def test_an_awaiting_run_expands_the_cells_variables(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, tmp_path: Path
) -> None:
    broker.create_stream("words", 1)
    broker.send("words", "a")
    broker.end_stream("words")
    assert run(shell, config_cell(broker, "words", job="expanded")).success
    assert run(shell, "%%samza_task\nclass Nothing:\n    def process(self, e, c, k):\n        pass\n").success
    shell.push({"recording": str(tmp_path / "rec")})
    cell = _rewritten(shell, "%samza_run --wait --no-dashboard --record {recording}\n")
    assert "run_and_wait(get_ipython(), '--wait --no-dashboard --record {recording}')" in cell
    assert run(shell, cell).success
    assert (tmp_path / "rec" / "header.json").exists()  # not a directory named {recording}


def test_no_rewrite_with_autoawait_off_or_in_a_cell_magic_body(shell: InteractiveShell) -> None:
    rewriter = WaitRewriter(shell)
    lines = ["get_ipython().run_line_magic('samza_run', '--wait')\n"]

    def run_cell_magic() -> list[str]:  # as IPython's, compiling a %%time or %%capture body
        return rewriter(lines)

    assert "await" in rewriter(lines)[0]
    assert run_cell_magic() == lines
    shell.autoawait = False
    try:
        assert rewriter(lines) == lines
    finally:
        shell.autoawait = True


def test_what_a_job_prints_goes_to_its_output_from_every_thread(
    broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    """The job's thread, its loop's tasks and the container's task threads (a thread pool) all write to
    the run's output; the calling thread's prints stay where they were."""
    from samza_nb.container.container import SamzaContainer
    from samza_nb.coordinator.planning import plan_job_model
    from samza_nb.notebook.display.monitor import Monitor

    class Loud:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            print("task", envelope.message)
            print("warned", envelope.message, file=sys.stderr)

    broker.create_stream("loud", 2)
    for i in range(4):
        broker.send("loud", i, partition=i % 2)
    broker.end_stream("loud")
    system = broker.namespace
    config = Config(
        {
            "job.name": "loud",
            "task.inputs": f"{system}.loud",
            f"systems.{system}.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            f"systems.{system}.samza.offset.default": "oldest",
            "job.container.thread.pool.size": "2",
        }
    )
    container = SamzaContainer(config, Loud, planner=plan_job_model)
    shown: list[dict[str, str]] = []
    output = CellOutput(refresh_s=0.05, publish=shown.append)
    job = JobRun.on_thread(container, Monitor(container, job="loud", mode="here"), output=output)
    print("the kernel's own line")
    assert job.join(10) and job.outcome == "finished"
    # Two task threads print at once: print() writes the words, separators and line end one by one, so
    # the two threads' writes may interleave (as in a terminal); every character arrives, once.
    expected = "".join(f"task {i}\nwarned {i}\n" for i in range(4))
    assert Counter(output.text) == Counter(expected)
    assert shown[0] == {"text/plain": "", "text/html": ""}  # shown empty when the run starts
    assert (
        "task 3" in shown[-1]["text/plain"]
        and "<span style='background:#fdd'>warned" in shown[-1]["text/html"]
    )
    captured = capsys.readouterr()
    assert captured.out == "the kernel's own line\n" and "warned" not in captured.err
    assert not isinstance(sys.stdout, RoutedStream), "the streams are unwrapped after the last run"


ENDS_WHILE_PRINTING = """
import contextvars, sys
from samza_nb.notebook.runs.cell_output import CellOutput, route_here

class Console:  # the kernel's stream; the run's thread ends the routing while a print() is inside it
    end = None
    def write(self, text):
        end, Console.end = Console.end, None
        if end is not None:
            end()
        return sys.__stderr__.write(text)
    def flush(self):
        pass

sys.stdout = Console()
Console.end = route_here(CellOutput(publish=lambda bundle: None))
contextvars.Context().run(print, "interrupted", "again", flush=True)  # a context outside the run
"""


def test_a_run_ending_while_another_thread_prints_leaves_the_print_whole() -> None:
    """print() holds a borrowed reference to sys.stdout while it writes (CPython 3.11): a run ending
    meanwhile must not free the wrapper under it (the kernel died of a segfault when an interrupt cancelled
    a job while the cell printed so). PYTHONMALLOC=debug makes a write through freed memory crash at once."""
    import os
    import subprocess

    env = dict(os.environ, PYTHONMALLOC="debug", PYTHONFAULTHANDLER="1")
    done = subprocess.run(
        [sys.executable, "-c", ENDS_WHILE_PRINTING],
        cwd=Path(__file__).parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "interrupted again\n")


def test_an_output_keeps_the_latest_text_and_counts_the_rest() -> None:
    shown: list[dict[str, str]] = []
    output = CellOutput(publish=shown.append)
    for i in range(MAX_CHARS // 10 + 100):
        output.write("stdout", f"line {i:04}\n")  # 10 characters each
    output.close()
    text = shown[-1]["text/plain"]
    first, *rest = text.splitlines()
    assert (
        first == "… 100 earlier lines not shown" and rest[0] == "line 0100" and len(rest) == MAX_CHARS // 10
    )
