"""The notebook layer's error, and how the magics show it: one line, never a traceback.

IPython lets one handler take over the display of chosen exception types (``set_custom_exc``). The magics
install one for :class:`NotebookError` (and the other mistakes of :data:`ONE_LINE_ERRORS`, which plain
Python in a cell may raise: recreating an in-memory stream a running job reads) that shows
``NotebookError: <message>`` as the cell's error: in
Jupyter an error output (the cell is marked failed, "Run all" stops, nbval fails the cell) with that one
line as its traceback. IPython has a single such slot: when something else holds it, the magics raise
IPython's own ``UsageError`` instead, which IPython also shows as one line (on stderr).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from IPython.core.error import UsageError

from samza_nb.errors import SamzaError, StreamInUseError


class NotebookError(SamzaError):
    """A mistake in a cell (no config, no task, a syntax error in the task cell, a job already running) or
    a job that failed while the cell waited for it. The message is the whole story."""


ONE_LINE_ERRORS: tuple[type[SamzaError], ...] = (NotebookError, StreamInUseError)
"""The errors a notebook shows as one line: their message is the whole story, a traceback would only
hide it."""


def _show_one_line(
    shell: Any,
    etype: type[BaseException],
    value: BaseException,
    tb: TracebackType | None,
    tb_offset: Any = None,
) -> None:
    """IPython's custom exception handler for :data:`ONE_LINE_ERRORS`: the error, as one line."""
    shell._showtraceback(etype, value, [f"{etype.__name__}: {value}"])


def install_one_line_errors(shell: Any) -> bool:
    """Let ``shell`` show :data:`ONE_LINE_ERRORS` as one-line errors; False when another handler holds the
    slot."""
    current = tuple(getattr(shell, "custom_exceptions", ()) or ())
    if NotebookError in current:
        return True
    if current or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc(ONE_LINE_ERRORS, _show_one_line)
    return True


@contextlib.contextmanager
def one_line_errors(shell: Any) -> Iterator[None]:
    """Around a magic's body: a NotebookError propagates when ``shell`` shows it as one line, and becomes
    IPython's UsageError (one line too) otherwise."""
    try:
        yield
    except NotebookError as exc:
        if NotebookError in tuple(getattr(shell, "custom_exceptions", ()) or ()):
            raise
        raise UsageError(str(exc)) from None


__all__ = ["ONE_LINE_ERRORS", "NotebookError", "install_one_line_errors", "one_line_errors"]
