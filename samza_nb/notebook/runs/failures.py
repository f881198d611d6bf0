"""A background job's failure, told to the user: which line of the ``%%samza_task`` cell raised, and the
task's traceback for ``%tb``.

A job on its own thread fails while the user does something else. The session shows the failure once, in
the next cell the user runs (or in the cell waiting for the job), as one line naming the task cell's
line; and it leaves the exception where IPython's ``%tb`` looks for the last one (``sys.last_value``), so
``%tb`` shows the task's own traceback, its cell lines included.
"""

from __future__ import annotations

import linecache
import sys
import traceback

from samza_nb.notebook.display.views import plural
from samza_nb.notebook.magics.task_cell import TaskDefinition


def _chain(error: BaseException) -> list[BaseException]:
    """``error`` and the exceptions it was raised from or during, outermost first (no cycles)."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and all(current is not e for e in seen):
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def task_cell_line(error: BaseException, task: TaskDefinition | None) -> str | None:
    """``line 5 of the %%samza_task cell: raise ValueError(...)`` for the innermost frame of ``error`` (or
    of an exception it was raised from) in ``task``'s cell; None when no frame is in the cell."""
    if task is None or not task.filename:
        return None
    found: traceback.FrameSummary | None = None
    for exc in _chain(error):
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == task.filename:
                found = frame
    if found is None or found.lineno is None:
        return None
    magic = "samza_app" if task.application else "samza_task"
    text = (found.line or linecache.getline(found.filename, found.lineno)).strip()
    source = f": {text}" if text else ""
    return f"line {found.lineno} of the %%{magic} cell{source}"


def keep_for_tb(error: BaseException) -> None:
    """Make ``error`` IPython's last exception, so ``%tb`` shows it (with its cause chain)."""
    sys.last_type = type(error)
    sys.last_value = error
    sys.last_traceback = error.__traceback__
    if sys.version_info >= (3, 12):
        sys.last_exc = error


def failure_line(
    job: str, processed: int, summary: str | None, error: BaseException | None, task: TaskDefinition | None
) -> str:
    """``job 'x' failed after 3 messages: <error> (line 5 of the %%samza_task cell: ...); %tb shows the
    traceback``: the one line a failed job is reported with; ``error`` is left for ``%tb``."""
    line = f"job {job!r} failed after {plural(processed, 'message')}: {summary}"
    if error is not None:
        keep_for_tb(error)
        where = task_cell_line(error, task)
        if where is not None:
            line += f" ({where}); %tb shows the traceback"
    return line


__all__ = ["failure_line", "keep_for_tb", "task_cell_line"]
