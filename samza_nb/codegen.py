"""Compiling generated Python source into functions whose tracebacks show the generated lines.

The run loop (a round's loop compiled for its width) and the operators (a task's chains of operators
compiled into a few functions) write Python source and run it. :func:`compile_function` is the one way
they do: the source is compiled under a file name such as ``<samza_nb round of 2 #1>`` and registered
with :mod:`linecache`, so a traceback through it (``traceback.format_exception``, a debugger, pytest)
shows the generated line that ran, not a bare ``<string>`` with nothing under it.

Code objects are cached by their source: the same source compiles once per process, and functions made
from it differ only in the globals they are bound to. The module sits at the package root, like
``errors.py``, because both ``container/`` and ``operators/`` use it and it needs nothing of either.
"""

from __future__ import annotations

import linecache
import threading
from collections.abc import Mapping
from types import CodeType
from typing import Any

__all__ = ["compile_function"]

_CODE: dict[str, CodeType] = {}
_LOCK = threading.Lock()


def compile_function(name: str, source: str, label: str, names: Mapping[str, Any] | None = None) -> Any:
    """The function ``name`` that ``source`` defines, run with a copy of ``names`` as its globals.

    ``label`` says what the code is (``"round of 2"``, ``"operators process"``); the file name tracebacks
    show is ``<samza_nb {label} #{n}>``, ``n`` counting the distinct sources compiled. A ``KeyError``
    names ``name`` when ``source`` does not define it.
    """
    code = _code(source, label)
    namespace: dict[str, Any] = dict(names) if names is not None else {}
    exec(code, namespace)
    try:
        return namespace[name]
    except KeyError:
        raise KeyError(f"generated source ({code.co_filename}) defines no {name!r}") from None


def _code(source: str, label: str) -> CodeType:
    """``source``'s code object, compiled once and registered with :mod:`linecache`."""
    with _LOCK:
        code = _CODE.get(source)
        if code is None:
            filename = f"<samza_nb {label} #{len(_CODE) + 1}>"
            # mtime None: linecache.checkcache keeps the entry (there is no file to check it against).
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            code = _CODE[source] = compile(source, filename, "exec")
        return code
