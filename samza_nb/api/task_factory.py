"""What counts as a task, of which kind (:func:`task_kind`), and turning what a user gives (a class, a
factory, an instance) into a factory.

The container recognises a task by its methods (``process`` or ``process_async``), not by subclassing.
"""

from __future__ import annotations

import enum
import inspect
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


class TaskKind(enum.Enum):
    """How a task processes a message."""

    SYNC = "sync"  # process() returns when done
    CALLBACK = "callback"  # process_async(..., callback)
    COROUTINE = "coroutine"  # async def process()


def task_kind(task: Any) -> TaskKind:
    """The kind of ``task``; a SamzaError naming its class when it has neither process nor process_async."""
    if callable(getattr(task, "process_async", None)):
        return TaskKind.CALLBACK
    process = getattr(task, "process", None)
    if not callable(process):
        raise SamzaError(
            f"{type(task).__qualname__} is not a task: it needs process(envelope, collector, coordinator) "
            f"or process_async(envelope, collector, coordinator, callback)"
        )
    if inspect.iscoroutinefunction(process):
        return TaskKind.COROUTINE
    return TaskKind.SYNC


__all__ = ["TaskKind", "has_process_method", "is_task_class", "is_task_instance", "task_factory", "task_kind"]
