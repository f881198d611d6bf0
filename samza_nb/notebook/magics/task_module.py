"""A ``%%samza_task`` cell as a module file, for a job of several container processes.

A job with ``job.container.count`` > 1 runs its tasks in child processes, which must import the task class.
The cell's source is written to ``<job directory>/notebook_task/samza_task_<hash>.py`` (the hash of the
source: an edited cell is a new module, so no process ever imports a stale copy) and ``task.class`` names
its class. The module starts with ``from samza_nb import *``: the names ``%load_ext samza_nb`` binds in the
notebook (``StreamTask``, ``OutgoingMessageEnvelope``, ...) need no import in the cell, as in the notebook.
Everything else the cell uses it must import or define itself: a child process sees none of the notebook's
other cells. :func:`undefined_names` finds the names it uses without defining them, before anything starts.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import symtable
from pathlib import Path

import samza_nb
from samza_nb.config import Config
from samza_nb.notebook.magics.task_cell import TaskDefinition
from samza_nb.storage.duckdb.job_files import job_directory

PREAMBLE = "from samza_nb import *  # noqa: F403  (the names %load_ext samza_nb binds in the notebook)"
MODULE_PREFIX = "samza_task_"
TASK_DIRECTORY = "notebook_task"
SELF_CONTAINED = (
    "each container process imports the %%samza_task cell on its own and sees none of the notebook's "
    "other cells: import or define what the cell uses inside the cell"
)
"""What a task cell of a job of several containers must be, as the error lines say it."""

_MODULE_NAMES = frozenset(
    {"__name__", "__file__", "__doc__", "__spec__", "__loader__", "__package__", "__builtins__"}
)


def module_source(source: str) -> str:
    """The module text of a cell's ``source``: the preamble, then the cell. When the cell's first line is
    empty (the ``%%samza_task`` line, as the magic passes it), the preamble takes its place, so line
    numbers in tracebacks are the cell's as the notebook shows them."""
    first, newline, rest = source.partition("\n")
    if not first.strip() and newline:
        return f"{PREAMBLE}\n{rest}\n"
    return f"{PREAMBLE}\n{source}\n"


def undefined_names(source: str) -> list[str]:
    """The global names ``source`` uses (at any depth) that it neither defines nor imports and that are
    neither builtins nor samza_nb's public names, sorted. A syntax error yields no names (the cell ran
    already, so it has none)."""
    try:
        top = symtable.symtable(source, "<samza_task cell>", "exec")
    except SyntaxError:
        return []
    defined = set(_MODULE_NAMES) | set(dir(builtins)) | set(samza_nb.__all__)
    used: set[str] = set()
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            name = symbol.get_name()
            at_top = table is top and (symbol.is_assigned() or symbol.is_imported())
            if at_top or (symbol.is_declared_global() and symbol.is_assigned()):
                defined.add(name)
            if symbol.is_global() and symbol.is_referenced():
                used.add(name)
    return sorted(used - defined)


def task_directory(config: Config) -> Path:
    """Where the job's task modules go: ``<job.logged.store.base.dir>/<job>-<id>/notebook_task``."""
    return job_directory(config) / TASK_DIRECTORY


def write_task_module(definition: TaskDefinition, directory: Path) -> str:
    """Write ``definition``'s cell as a module in ``directory`` (once per distinct source); returns the
    ``task.class`` value naming its class."""
    text = module_source(definition.source)
    module = MODULE_PREFIX + hashlib.sha256(text.encode()).hexdigest()[:16]
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{module}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    return f"{module}.{definition.name}"


__all__ = [
    "SELF_CONTAINED",
    "module_source",
    "task_directory",
    "undefined_names",
    "write_task_module",
]
