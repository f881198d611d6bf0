"""Running a StreamApplication from the notebook: plan it (creating its intermediate streams) before the
container starts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from samza_nb.config import Config
from samza_nb.container import event_loop
from samza_nb.errors import SamzaError
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.magics.task_cell import TaskDefinition
from samza_nb.operators.plan import APP_CLASS_KEY
from samza_nb.operators.prepare import prepare_application
from samza_nb.runtime.applications import load_application


def planned_application(
    config: Config, task: TaskDefinition | None
) -> tuple[Config, Callable[[], Any] | None]:
    """For a StreamApplication (a ``%%samza_app`` cell, else ``app.class`` without a task cell): the
    planned job config (its intermediate streams created) and the operator task's factory; otherwise
    ``config`` and None. A split application is refused: the notebook runs one job. Mistakes are one
    NotebookError line."""
    if task is not None and task.application:
        app: Any = task.cls
    elif task is None and config.get_str(APP_CLASS_KEY, "").strip():
        app = None
    else:
        return config, None
    try:
        if app is None:
            app = load_application(config)
        prepared = event_loop.run_blocking(prepare_application(app, config))
    except SamzaError as exc:
        raise NotebookError(f"samza_run: {exc}") from None
    if len(prepared.jobs) != 1:
        raise NotebookError(
            f"samza_run: the application runs as {len(prepared.jobs)} jobs (app.split.jobs); the "
            "notebook runs one: drop app.split.jobs, pick one with app.stage = N, or use samza-nb run"
        )
    return prepared.jobs[0], prepared.task_factory


__all__ = ["planned_application"]
