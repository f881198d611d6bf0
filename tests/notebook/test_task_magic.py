"""%%samza_task in a real IPython shell: the cell defines the task class; mistakes are one line."""

from __future__ import annotations

import linecache

import pytest
from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics.registration import SamzaMagics

from .helpers import error_line, run

TASK = """%%samza_task
class Upper(StreamTask):
    def process(self, envelope, collector, coordinator):
        collector.send(OutgoingMessageEnvelope(SystemStream("mem", "out"), envelope.message.upper()))
"""


def test_cell_defines_the_task_in_the_notebook_namespace(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.push({"StreamTask": object, "OutgoingMessageEnvelope": object, "SystemStream": object})
    assert run(shell, TASK).success
    task = magics.session.task
    assert task is not None and task.name == "Upper"
    assert shell.user_ns["Upper"] is task.cls
    assert task.factory()() is not None
    assert capsys.readouterr().out.strip() == "task Upper defined: %samza_run runs it"


def test_rerunning_the_cell_replaces_the_task_and_says_so(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    run(shell, "%%samza_task\nclass A:\n    def process(self, e, c, k):\n        pass\n")
    run(shell, "%%samza_task\nclass B:\n    async def process(self, e, c, k):\n        pass\n")
    assert magics.session.task is not None and magics.session.task.name == "B"
    assert capsys.readouterr().out.splitlines()[-1] == "task B replaces task A for the next %samza_run"


def test_task_source_is_in_tracebacks(shell: InteractiveShell, magics: SamzaMagics) -> None:
    run(shell, "%%samza_task\nclass A:\n    def process(self, e, c, k):\n        return 1 / 0\n")
    assert magics.session.task is not None
    code = magics.session.task.cls.process.__code__
    assert "return 1 / 0" in linecache.getline(code.co_filename, 4)


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%samza_task\nclass A(\n", "SyntaxError in the task cell, line 2: '(' was never closed: class A("),
        ("%%samza_task\nclass A:\n    x = undefined_name\n", "the task cell failed at line 3: NameError"),
        ("%%samza_task\nclass NotATask:\n    pass\n", "the cell defines no task class"),
        (
            "%%samza_task\nclass A:\n    def process(self, e, c, k): pass\nclass B(A):\n    pass\n",
            "several task classes (A, B): name the one to run, e.g. %%samza_task B",
        ),
        (
            "%%samza_task Missing\nclass A:\n    def process(self, e, c, k): pass\n",
            "defines no class 'Missing'",
        ),
        ("%%samza_task 1x\nclass A:\n    pass\n", "'1x' is not a class name"),
    ],
)
def test_mistakes_are_one_line(
    shell: InteractiveShell,
    magics: SamzaMagics,
    capsys: pytest.CaptureFixture[str],
    cell: str,
    message: str,
) -> None:
    assert message in error_line(run(shell, cell), capsys)
    assert magics.session.task is None


def test_naming_the_class_picks_it(shell: InteractiveShell, magics: SamzaMagics) -> None:
    cell = "%%samza_task B\nclass A:\n    def process(self, e, c, k): pass\nclass B(A):\n    pass\n"
    assert run(shell, cell).success
    assert magics.session.task is not None and magics.session.task.name == "B"


def test_a_task_cell_while_a_job_runs_is_for_the_next_run(
    shell: InteractiveShell, magics: SamzaMagics, capsys: pytest.CaptureFixture[str]
) -> None:
    """Several named jobs may run at once: a task cell defines the next run's task; running ones keep
    theirs (their containers already made their task instances)."""

    class Running:
        done = False

    magics.session.config = {"job.name": "busy"}
    magics.session.runs["busy"] = Running()  # type: ignore[assignment]
    shell.user_ns.pop("Fresh", None)
    result = run(shell, "%%samza_task\nclass Fresh:\n    def process(self, e, c, k): pass\n")
    magics.session.runs.clear()
    assert result.success
    out = capsys.readouterr().out
    assert "task Fresh" in out and "running: 'busy', with the task it started with" in out
    assert magics.session.task is not None and magics.session.task.name == "Fresh"
