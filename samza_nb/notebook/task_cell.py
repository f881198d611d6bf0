"""``%%samza_task``: the cell defines the job's task class.

The cell runs in the notebook's namespace (its imports and classes stay visible to later cells). The task
is the class the cell defines at top level that has ``process`` or ``process_async``; when the cell defines
several, the magic's argument names the one to use. Every mistake (a syntax error, an exception while the
cell runs, no task class, several) is one :class:`NotebookError` line naming the cell line.
"""

from __future__ import annotations

import ast
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samza_nb.api.task_factory import is_task_class


@dataclass(frozen=True)
class TaskDefinition:
    """A task class defined by a ``%%samza_task`` cell, with the cell's source as it ran (the magic passes
    the cell after an empty first line, so line N of ``source`` is line N of the cell in the notebook)."""

    name: str
    cls: type
    source: str

    def factory(self) -> Callable[[], Any]:
        """The zero-argument task factory the container calls once per task instance."""
        return self.cls


def define_task(
    cell: str,
    namespace: dict[str, Any],
    *,
    requested: str | None = None,
    filename: str = "<samza_task cell>",
) -> TaskDefinition:
    """Run ``cell`` in ``namespace`` and return the task class it defines.

    ``filename`` names the cell in tracebacks of the task's own errors later (register the source in
    ``linecache`` under that name to see its lines). Raises :class:`NotebookError` for any mistake.
    """
    from samza_nb.notebook.errors import NotebookError

    try:
        tree = ast.parse(cell, filename=filename)
    except SyntaxError as exc:
        text = f": {exc.text.strip()}" if exc.text and exc.text.strip() else ""
        raise NotebookError(
            f"samza_task: {type(exc).__name__} in the task cell, line {exc.lineno}: {exc.msg}{text}"
        ) from None
    classes = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    if requested is not None and requested not in classes and requested not in namespace:
        raise NotebookError(
            f"samza_task: the cell defines no class {requested!r} (it defines: "
            f"{', '.join(classes) or 'no classes'})"
        )
    code = compile(tree, filename, "exec")
    try:
        exec(code, namespace)
    except Exception as exc:
        raise NotebookError(
            f"samza_task: the task cell failed{_cell_line(exc, filename)}: {type(exc).__name__}: {exc}"
        ) from None
    if requested is not None:
        target = namespace.get(requested)
        if not is_task_class(target):
            raise NotebookError(
                f"samza_task: {requested!r} is not a task class: give it process(envelope, collector, "
                "coordinator) or process_async(envelope, collector, coordinator, callback)"
            )
        assert isinstance(target, type)
        return TaskDefinition(requested, target, cell.rstrip("\n"))
    tasks = [name for name in classes if is_task_class(namespace.get(name))]
    if not tasks:
        raise NotebookError(
            "samza_task: the cell defines no task class: define a class with process(envelope, collector, "
            "coordinator), process_async(envelope, collector, coordinator, callback) or async def process"
        )
    if len(tasks) > 1:
        raise NotebookError(
            f"samza_task: the cell defines several task classes ({', '.join(tasks)}): name the one to run, "
            f"e.g. %%samza_task {tasks[-1]}"
        )
    cls = namespace[tasks[0]]
    return TaskDefinition(tasks[0], cls, cell.rstrip("\n"))


def _cell_line(exc: BaseException, filename: str) -> str:
    frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == filename]
    return f" at line {frames[-1].lineno}" if frames else ""


__all__ = ["TaskDefinition", "define_task", "is_task_class"]
