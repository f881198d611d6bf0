"""What counts as a task, and turning what a user gives (a class, a factory, an instance) into a factory.

The container recognises a task by its methods (``process`` or ``process_async``), not by subclassing.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samza_nb.errors import SamzaError


def has_process_method(obj: object) -> bool:
    """True when ``obj`` (a class or an instance) has a callable ``process`` or ``process_async``."""
    return callable(getattr(obj, "process", None)) or callable(getattr(obj, "process_async", None))


def is_task_class(obj: object) -> bool:
    """True for a class whose instances are tasks."""
    return isinstance(obj, type) and has_process_method(obj)


def is_task_instance(obj: object) -> bool:
    """True for a task object (not a class)."""
    return not isinstance(obj, type) and has_process_method(obj)


def task_factory(task: Any) -> Callable[[], Any]:
    """A zero-argument factory for ``task``.

    A class or a zero-argument factory is called once per task (each task gets its own instance); a task
    instance is shared by every task. Anything else raises :class:`SamzaError` naming it.
    """
    if isinstance(task, type) or (callable(task) and not is_task_instance(task)):
        factory: Callable[[], Any] = task
        return factory
    if is_task_instance(task):
        return lambda: task
    raise SamzaError(
        f"{task!r} is not a task: give a task class, a zero-argument factory or a task instance "
        "(StreamApplication support comes with the high-level API)"
    )


__all__ = ["has_process_method", "is_task_class", "is_task_instance", "task_factory"]
