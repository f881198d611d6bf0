"""``%%samza_task`` and ``%%samza_app``: the cell defines the job's task class, or its StreamApplication.

The cell runs in the notebook's namespace (its imports and classes stay visible to later cells). The task
is the class the cell defines at top level that has ``process`` or ``process_async`` (for ``%%samza_app``:
that subclasses ``samza_nb.operators.StreamApplication``); when the cell defines several, the magic's
argument names the one to use. Every mistake (a syntax error, an exception while the cell runs, no such
class, several) is one :class:`NotebookError` line naming the cell line.
"""

from __future__ import annotations

import ast
import inspect
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samza_nb.api.task_factory import is_task_class
from samza_nb.operators.application import is_application


@dataclass(frozen=True)
class TaskDefinition:
    """A task class defined by a ``%%samza_task`` cell (or a StreamApplication by a ``%%samza_app`` cell:
    ``application`` is True), with the cell's source as it ran (the magic passes the cell after an empty
    first line, so line N of ``source`` is line N of the cell in the notebook); ``filename`` is the name
    its code was compiled under (tracebacks of the task's errors name it)."""

    name: str
    cls: type
    source: str
    application: bool = False
    filename: str = ""

    def factory(self) -> Callable[[], Any]:
        """The zero-argument task factory the container calls once per task instance (for an application:
        its operator task)."""
        if self.application:
            from samza_nb.operators.task import operator_task_factory

            return operator_task_factory(self.cls)
        return self.cls


def defined_line(
    new: TaskDefinition, previous: TaskDefinition | None, running: list[str], last_run: str | None
) -> str:
    """What a ``%%samza_task`` / ``%%samza_app`` cell says: ``new`` is defined (or replaces ``previous``)
    for the next ``%samza_run``; the jobs ``running`` keep theirs; ``last_run`` says how the latest run
    ended (``job 'x' has finished``)."""
    what = "application" if new.application else "task"
    keeps = (
        f" (running: {', '.join(repr(n) for n in running)}, with the task it started with)" if running else ""
    )
    if previous is None:
        return f"{what} {new.name} defined: %samza_run runs it{keeps}"
    ran = keeps or (f" (the previous run of {last_run})" if last_run else "")
    before = "application" if previous.application else "task"
    return f"{what} {new.name} replaces {before} {previous.name} for the next %samza_run{ran}"


def define_task(
    cell: str,
    namespace: dict[str, Any],
    *,
    requested: str | None = None,
    filename: str = "<samza_task cell>",
    application: bool = False,
) -> TaskDefinition:
    """Run ``cell`` in ``namespace`` and return the task class it defines (``application``: the
    StreamApplication class).

    ``filename`` names the cell in tracebacks of the task's own errors later (register the source in
    ``linecache`` under that name to see its lines). Raises :class:`NotebookError` for any mistake.
    """
    from samza_nb.notebook.errors import NotebookError

    if application:
        return _define_application(cell, namespace, requested, filename)

    classes = _run_cell(cell, namespace, requested, filename, "samza_task")
    if requested is not None:
        target = namespace.get(requested)
        if not is_task_class(target):
            raise NotebookError(
                f"samza_task: {requested!r} is not a task class: give it process(envelope, collector, "
                "coordinator) or process_async(envelope, collector, coordinator, callback)"
            )
        assert isinstance(target, type)
        return TaskDefinition(requested, target, cell.rstrip("\n"), filename=filename)
    name = _only(
        [name for name in classes if is_task_class(namespace.get(name))],
        "samza_task",
        "task classes",
        "task class: define a class with process(envelope, collector, coordinator), "
        "process_async(envelope, collector, coordinator, callback) or async def process",
    )
    return TaskDefinition(name, namespace[name], cell.rstrip("\n"), filename=filename)


def _run_cell(
    cell: str, namespace: dict[str, Any], requested: str | None, filename: str, magic: str
) -> list[str]:
    """Run the cell in ``namespace``; the names of the classes it defines at top level."""
    from samza_nb.notebook.errors import NotebookError

    try:
        tree = ast.parse(cell, filename=filename)
    except SyntaxError as exc:
        text = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        raise NotebookError(
            f"{magic}: {type(exc).__name__} in the {_noun(magic)} cell, line {exc.lineno}: {exc.msg}{text}"
        ) from None
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    if requested is not None and requested not in classes and requested not in namespace:
        raise NotebookError(
            f"{magic}: the cell defines no class {requested!r} (it defines: "
            f"{', '.join(classes) or 'no classes'})"
        )
    code = compile(tree, filename, "exec")
    try:
        exec(code, namespace)
    except Exception as exc:
        raise NotebookError(
            f"{magic}: the {_noun(magic)} cell failed{_cell_line(exc, filename)}: {type(exc).__name__}: {exc}"
        ) from None
    return classes


def _define_application(
    cell: str, namespace: dict[str, Any], requested: str | None, filename: str
) -> TaskDefinition:
    from samza_nb.notebook.errors import NotebookError

    classes = _run_cell(cell, namespace, requested, filename, "samza_app")
    if requested is not None:
        target = namespace.get(requested)
        if not (isinstance(target, type) and is_application(target)):
            raise NotebookError(
                f"samza_app: {requested!r} is not a StreamApplication: subclass "
                "samza_nb.operators.StreamApplication and define describe(self, app)"
            )
        return TaskDefinition(requested, target, cell.rstrip("\n"), application=True, filename=filename)
    name = _only(
        [name for name in classes if _is_application_class(namespace.get(name))],
        "samza_app",
        "applications",
        "application: define a subclass of samza_nb.operators.StreamApplication with describe(self, app)",
    )
    return TaskDefinition(name, namespace[name], cell.rstrip("\n"), application=True, filename=filename)


def _only(names: list[str], magic: str, kinds: str, none: str) -> str:
    """The one class the cell defines of the kind ``magic`` runs; a NotebookError for none or several."""
    from samza_nb.notebook.errors import NotebookError

    if not names:
        raise NotebookError(f"{magic}: the cell defines no {none}")
    if len(names) > 1:
        raise NotebookError(
            f"{magic}: the cell defines several {kinds} ({', '.join(names)}): name the one to run, "
            f"e.g. %%{magic} {names[-1]}"
        )
    return names[0]


def _noun(magic: str) -> str:
    return "task" if magic == "samza_task" else "app"


def _is_application_class(obj: object) -> bool:
    return isinstance(obj, type) and is_application(obj) and not inspect.isabstract(obj)


def _cell_line(exc: BaseException, filename: str) -> str:
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename]
    return f" at line {frames[-1].lineno}" if frames else ""


__all__ = ["TaskDefinition", "define_task", "defined_line", "is_task_class"]
