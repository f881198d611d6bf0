"""Runners: run a job in this process (``LocalJobRunner``) and the ``samza-nb`` command line.

The names load on first use: a process that needs one module of this package (an executor's Python worker
imports :mod:`.spark.task`, a container :mod:`.console`) does not import the local runner and the
container's loop with it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.container.steering.loop_steering import NextMessage, Step, Steps
    from samza_nb.runtime.local import LocalJobRunner, load_task_factory

_HOMES = {
    "NextMessage": "samza_nb.container.steering.loop_steering",
    "Step": "samza_nb.container.steering.loop_steering",
    "Steps": "samza_nb.container.steering.loop_steering",
    "LocalJobRunner": "samza_nb.runtime.local",
    "load_task_factory": "samza_nb.runtime.local",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    """The module's names, those loaded on first use included (what ``dir()`` and Sphinx's autodoc list)."""
    return sorted({*globals(), *_HOMES})


__all__ = ["LocalJobRunner", "NextMessage", "Step", "Steps", "load_task_factory"]
