"""%samza_run, %samza_stop and the job's outcomes in a real IPython shell.

A job always runs on its own thread and event loop, whether or not the shell's thread runs a loop (a Jupyter
kernel's does; here ``asyncio.run`` stands in for it): it keeps processing while the shell's thread is
busy with something else.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics
from samza_nb.notebook.runs import job
from samza_nb.notebook.runs.job import OWN_THREAD
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually

from . import sample_tasks
from .helpers import config_cell, error_line, fill, run

COLLECT = """%%samza_task
class Collect:
    seen = []
    def process(self, envelope, collector, coordinator):
        Collect.seen.append(envelope.message)
"""

FAIL_AT_3 = """%%samza_task
class FailAt3:
    def process(self, envelope, collector, coordinator):
        if envelope.offset == "3":
            raise ValueError("bad message " + repr(envelope.message))
"""


def main_thread_waits_for_the_job(main: int) -> bool:
    """True while the thread ``main`` blocks inside JobRun.wait (where an interrupt stops the job)."""
    frame = sys._current_frames().get(main)
    while frame is not None and frame.f_back is not None:
        caller = frame.f_back.f_code
        if frame.f_code.co_name == "wait" and caller.co_name == "wait" and caller.co_filename == job.__file__:
            return True
        frame = frame.f_back
    return False


def test_wait_runs_to_end_of_stream_on_its_own_thread(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 2, 100)
    run(shell, config_cell(broker, "in", task_max_concurrency=2))
    run(shell, COLLECT)
    result = run(shell, "%samza_run --wait --timeout 20")
    assert result.success
    assert sorted(shell.user_ns["Collect"].seen) == list(range(100))
    session = magics.session
    assert session.run is not None and session.run.mode == OWN_THREAD and session.run.outcome == "finished"
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("job 'nbjob' finished: 100 messages in ")
    assert "every input reached end-of-stream; 2 checkpoints written" in last


@pytest.mark.parametrize(
    ("cells", "message"),
    [
        ([], "samza_run: no job config: write a %%samza_config cell"),
        (["%samza_config job.name=x task.inputs=nb.in"], "no task: define one in a %%samza_task cell"),
        (["%samza_config job.name=x", COLLECT], "missing required config task.inputs"),
        (["%samza_config task.inputs=ghost.in", COLLECT], "systems.ghost.samza.factory"),
    ],
)
def test_mistakes_before_running_are_one_line(
    shell: InteractiveShell,
    magics: SamzaMagics,
    capsys: pytest.CaptureFixture[str],
    cells: list[str],
    message: str,
) -> None:
    for cell in cells:
        run(shell, cell)
    capsys.readouterr()
    assert message in error_line(run(shell, "%samza_run --wait"), capsys)
    assert magics.session.run is None


@pytest.mark.parametrize("args", ["--timeout 0", "--max-messages -1", "--nope", "--timeout soon"])
def test_bad_options_are_one_line(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str], args: str
) -> None:
    assert error_line(run(shell, f"%samza_run {args}"), capsys).startswith("NotebookError: samza_run: ")


def test_task_class_from_config(shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 5)
    sample_tasks.SEEN.clear()
    run(shell, config_cell(broker, "in", task_class="tests.notebook.sample_tasks.Collect"))
    assert run(shell, "%samza_run --wait --no-dashboard").success
    assert sample_tasks.SEEN == [0, 1, 2, 3, 4]


def test_a_task_class_the_task_cell_overrides_is_said_at_run(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 5)
    sample_tasks.SEEN.clear()
    run(shell, config_cell(broker, "in", task_class="tests.notebook.sample_tasks.Collect"))
    run(shell, COLLECT)
    capsys.readouterr()
    assert run(shell, "%samza_run --wait --no-dashboard").success
    assert sorted(shell.user_ns["Collect"].seen) == [0, 1, 2, 3, 4] and sample_tasks.SEEN == []
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "note: task.class = tests.notebook.sample_tasks.Collect is not run: the %%samza_task cell's "
        "Collect runs in its place"
    )


def test_background_job_already_running_then_stop_waits_and_commits(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 2, 10, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    assert run(shell, "%samza_run").success
    assert "started in the background on its own thread" in capsys.readouterr().out
    session = magics.session
    eventually(lambda: session.view is not None and session.view.processed == 10, timeout=10)
    result = run(shell, "%samza_run")
    line = error_line(result, capsys)
    assert "job 'nbjob' is already running (10 processed): %samza_stop nbjob first" in line
    assert run(shell, "%samza_stop").success
    assert session.run is not None and session.run.done and session.run.outcome == "stopped"
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("job 'nbjob' stopped: 10 messages")
    report = shell.run_line_magic("samza_checkpoints", "")
    assert {
        task: {str(ssp): o for ssp, o in offsets.items()} for task, offsets in report.offsets.items()
    } == {
        "Partition 0": {f"{broker.namespace}.in#0": "4"},
        "Partition 1": {f"{broker.namespace}.in#1": "4"},
    }
    run(shell, "%samza_stop")
    assert capsys.readouterr().out.strip() == "no job is running (the last run stopped)"


def test_timeout_stops_gracefully(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 3, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    started = time.monotonic()
    assert run(shell, "%samza_run --wait --timeout 0.3").success
    assert 0.3 <= time.monotonic() - started < 5
    assert magics.session.run is not None and magics.session.run.outcome == "timed out"
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("job 'nbjob' timed out: 3 messages")
    assert shell.run_line_magic("samza_checkpoints", "").offsets["Partition 0"]


def test_max_messages(shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker) -> None:
    fill(broker, "in", 1, 50)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    assert run(shell, "%samza_run --wait --max-messages 10").success
    assert magics.session.view is not None and magics.session.view.processed == 10


def test_rerun_resumes_after_the_checkpoint_and_reset_starts_over(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 30)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    run(shell, "%samza_run --wait --max-messages 10")
    run(shell, "%samza_run --wait")
    assert shell.user_ns["Collect"].seen == list(range(30))
    assert magics.session.view is not None and magics.session.view.processed == 20
    capsys.readouterr()
    run(shell, "%samza_checkpoints --reset")
    assert "job 'nbjob' (job.id '1') reset, dropped: checkpoints of 1 task(s)" in capsys.readouterr().out
    run(shell, "%samza_run --wait")
    assert magics.session.view is not None and magics.session.view.processed == 30


def test_replacing_the_task_after_a_run_says_so(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 3)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    run(shell, "%samza_run --wait")
    capsys.readouterr()
    run(shell, FAIL_AT_3)
    assert capsys.readouterr().out.strip() == (
        "task FailAt3 replaces task Collect for the next %samza_run "
        "(the previous run of job 'nbjob' has finished)"
    )


def test_failure_while_waiting_is_one_line_and_fails_the_cell(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 10)
    run(shell, config_cell(broker, "in"))
    run(shell, FAIL_AT_3)
    capsys.readouterr()
    error = error_line(run(shell, "%samza_run --wait"), capsys)
    assert error.startswith("NotebookError: job 'nbjob' failed after 3 messages: ")
    assert "Partition 0" in error and "offset 3" in error and "bad message 3" in error
    assert magics.session.run is not None and magics.session.run.outcome == "failed"
    # The failed message's offset is never checkpointed.
    assert shell.run_line_magic("samza_checkpoints", "").offsets == {}


def test_failure_in_the_background_shows_in_the_status(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 1, 10)
    run(shell, config_cell(broker, "in"))
    run(shell, FAIL_AT_3)
    assert run(shell, "%samza_run").success
    assert magics.session.run is not None and magics.session.run.join(10)
    status = shell.run_line_magic("samza_status", "")
    assert status.state == "failed"
    assert status.view.error is not None and "bad message 3" in status.view.error
    assert "error: " in str(status)


def test_interrupt_while_waiting_stops_the_job_gracefully(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 5, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    main = threading.main_thread().ident
    assert main is not None

    def interrupt() -> None:
        eventually(lambda: magics.session.view is not None and magics.session.view.processed == 5, timeout=10)
        eventually(
            lambda: main_thread_waits_for_the_job(main), timeout=10, message="%samza_run --wait waiting"
        )
        signal.pthread_kill(main, signal.SIGINT)

    threading.Thread(target=interrupt, daemon=True).start()
    assert run(shell, "%samza_run --wait").success
    assert magics.session.run is not None and magics.session.run.outcome == "interrupted"
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith("job 'nbjob' interrupted: 5 messages")
    assert shell.run_line_magic("samza_checkpoints", "").offsets["Partition 0"]


def test_a_background_job_keeps_running_while_the_shell_thread_is_busy(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    fill(broker, "in", 4, 20_000, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    session = magics.session

    async def notebook() -> None:
        assert run(shell, "%samza_run").success  # like a cell in a kernel: this thread runs a loop
        assert session.run is not None and session.run.mode == OWN_THREAD
        # This thread never yields to its loop (a time.sleep cell, a CPU-bound cell): the job goes on.
        eventually(lambda: session.view is not None and session.view.processed == 20_000, timeout=20)
        run(shell, "%samza_stop")

    asyncio.run(notebook())
    assert session.run is not None and session.run.outcome == "stopped"
    assert len(shell.user_ns["Collect"].seen) == 20_000
    report = shell.run_line_magic("samza_checkpoints", "")
    assert sorted(report.offsets) == ["Partition 0", "Partition 1", "Partition 2", "Partition 3"]
    assert all(offset == "4999" for offsets in report.offsets.values() for offset in offsets.values())


def test_magic_lines_ignore_comments_and_stop_then_run_in_one_cell(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 50)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    cell = (
        "%samza_run --max-messages 10   # the kernel's first ten messages, in the background\n"
        "%samza_stop                     # graceful: every task commits\n"
        "%samza_run --wait --timeout 20  # resumes after the checkpoint, until end-of-stream\n"
    )
    result = run(shell, cell)
    assert result.success, capsys.readouterr()
    assert magics.session.run is not None and magics.session.run.outcome == "finished"
    assert sorted(shell.user_ns["Collect"].seen) == list(range(50))


def test_two_named_jobs_run_at_once_each_with_its_own_name(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 5, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    assert run(shell, "%samza_run --name first").success
    assert run(shell, "%samza_run --name second").success
    session = magics.session
    assert sorted(session.runs) == ["first", "second"]
    again = run(shell, "%samza_run --name first")
    assert "job 'first' is already running" in error_line(again, capsys)
    eventually(lambda: all(r.view.processed == 5 for r in session.runs.values()), timeout=10)
    assert shell.run_line_magic("samza_status", "first").view.job == "first"
    run(shell, "%samza_stop first")
    assert session.runs["first"].outcome == "stopped" and not session.runs["second"].done
    run(shell, "%samza_stop")
    assert session.runs["second"].outcome == "stopped"
    # Each name is its own job: its own checkpoints.
    assert shell.run_line_magic("samza_checkpoints", "second").offsets["Partition 0"]
    nobody = run(shell, "%samza_stop nobody")
    assert "no job named 'nobody'" in error_line(nobody, capsys)


def test_a_background_failure_shows_once_in_the_next_cell_with_the_task_cell_line(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 10)
    run(shell, config_cell(broker, "in"))
    run(shell, FAIL_AT_3)
    assert run(shell, "%samza_run").success
    assert magics.session.run is not None and magics.session.run.join(10)
    capsys.readouterr()
    run(shell, "x = 1")
    err = capsys.readouterr().err
    assert "samza_nb: job 'nbjob' failed after 3 messages" in err
    assert "bad message 3" in err
    assert 'line 5 of the %%samza_task cell: raise ValueError("bad message " + repr(envelope.message))' in err
    assert "%tb shows the traceback" in err
    run(shell, "y = 2")
    assert "failed" not in capsys.readouterr().err  # once
    shell.run_line_magic("tb", "")
    shown = capsys.readouterr()
    assert "ValueError" in shown.out + shown.err and "bad message" in shown.out + shown.err


def test_the_interpreter_switches_threads_sooner_while_a_job_runs(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker
) -> None:
    """A busy job holds the GIL; the kernel's threads wait for it at every step of a cell. While any job
    runs, the switch interval is 1 ms (a new cell starts in ~50 ms, not ~250 ms); then it is restored."""
    before = sys.getswitchinterval()
    fill(broker, "in", 1, 5, end=False)
    run(shell, config_cell(broker, "in"))
    run(shell, COLLECT)
    run(shell, "%samza_run --name a")
    run(shell, "%samza_run --name b")
    assert sys.getswitchinterval() == job.SWITCH_INTERVAL_S
    run(shell, "%samza_stop a")
    assert sys.getswitchinterval() == job.SWITCH_INTERVAL_S  # b still runs
    run(shell, "%samza_stop b")
    eventually(lambda: sys.getswitchinterval() == before, timeout=10, message="the interval restored")


def test_a_failure_not_yet_told_is_told_before_its_run_is_replaced(
    shell: InteractiveShell, magics: SamzaMagics, broker: InMemoryBroker, capsys: pytest.CaptureFixture[str]
) -> None:
    fill(broker, "in", 1, 10)
    run(shell, config_cell(broker, "in"))
    run(shell, FAIL_AT_3)
    first = magics.session
    # One cell: start, wait until it failed, start again (no cell in between to tell the failure).
    cell = "%samza_run\nassert samza.run.join(10)\n%samza_checkpoints --reset\n%samza_run --max-messages 2\n"
    shell.user_ns["samza"] = first
    run(shell, cell)
    out = capsys.readouterr()
    assert "job 'nbjob' failed after 3 messages" in out.out + out.err
