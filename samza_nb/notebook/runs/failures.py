"""A background job's failure, told to the user: which line of the ``%%samza_task`` cell raised, and the
task's traceback for ``%tb``.

A job on its own thread fails while the user does something else. The session shows the failure once, in
the next cell the user runs (or in the cell waiting for the job), as one line naming the task cell's
line; and it leaves the exception where IPython's ``%tb`` looks for the last one (``sys.last_value``), so
``%tb`` shows the task's own traceback, its cell lines included. What ``%tb`` shows is the task's exception
(not samza_nb's wrapper saying which task failed: the line said it), from its first frame outside samza_nb:
the container's frames and the code it generates (``<samza_nb round of 2 #1>``) are left out.
"""

from __future__ import annotations

import linecache
import sys
import sysconfig
import traceback
from pathlib import Path
from types import TracebackType

import samza_nb
from samza_nb.notebook.display.views import plural
from samza_nb.notebook.magics.task_cell import TaskDefinition
from samza_nb.notebook.runs.failing_message import failing_message


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


_PACKAGE = Path(samza_nb.__file__).parent
_STDLIB = Path(sysconfig.get_paths()["stdlib"])
_RUNNERS = ("asyncio", "concurrent", "threading.py")
"""The standard library's machinery a job's code runs under (its frames are not the user's either)."""


def internal(filename: str) -> bool:
    """True for a frame of samza_nb itself (its modules, the code it generates) or of the standard
    library's machinery that runs it (asyncio, thread pools): not the user's code."""
    if filename.startswith("<samza_nb "):
        return True
    path = Path(filename)
    if path.is_relative_to(_PACKAGE):
        return True
    return path.is_relative_to(_STDLIB) and path.relative_to(_STDLIB).parts[0] in _RUNNERS


def users_part(error: BaseException) -> tuple[BaseException, TracebackType | None]:
    """The exception ``%tb`` shows for ``error`` and its traceback: the outermost exception of the chain
    with a frame in the user's code, from its first such frame (the exceptions it was raised from or during
    come with it); ``error`` as it is when no exception was."""
    for exc in _chain(error):
        tb = exc.__traceback__
        while tb is not None and internal(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next
        if tb is not None:
            return exc, tb
    return error, error.__traceback__


def keep_for_tb(error: BaseException) -> None:
    """Make ``error`` (its user's part: :func:`users_part`) IPython's last exception, so ``%tb`` shows
    it, with the exceptions it was raised from."""
    shown, tb = users_part(error)
    sys.last_type = type(shown)
    sys.last_value = shown
    sys.last_traceback = tb
    if sys.version_info >= (3, 12):
        sys.last_exc = shown


def failure_line(
    job: str,
    processed: int,
    summary: str | None,
    error: BaseException | None,
    task: TaskDefinition | None,
    record: str | None = None,
) -> str:
    """``job 'x' failed after 3 messages: <error> (line 5 of the %%samza_task cell: ...); %tb shows the
    traceback``: the one line a failed job is reported with; ``error`` is left for ``%tb``. When a message
    failed it, the line links it (:mod:`.failing_message`; ``record``: the run's recording directory)."""
    line = f"job {job!r} failed after {plural(processed, 'message')}: {summary}"
    if error is not None:
        keep_for_tb(error)
        where = task_cell_line(error, task)
        if where is not None:
            line += f" ({where}); %tb shows the traceback"
        message = failing_message(error)
        if message is not None:
            line += f"; {message.link(record)}"
    return line


__all__ = ["failure_line", "internal", "keep_for_tb", "task_cell_line", "users_part"]
