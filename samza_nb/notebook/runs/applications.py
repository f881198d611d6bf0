"""What a notebook run runs, decided once (the cell's task or application, else the config's
``task.class`` / ``app.class``), and planning a StreamApplication (creating its intermediate streams)
before the container starts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb.config.app_keys import APP_CLASS_KEY
from samza_nb.container import event_loop
from samza_nb.errors import SamzaError
from samza_nb.notebook.errors import NotebookError
from samza_nb.runtime.applications import (
    TASK_CLASS_KEY,
    JobProgram,
    NoJobProgramError,
    TaskFactory,
    what_job_runs,
)

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.notebook.magics.task_cell import TaskDefinition


def run_program(config: Config, task: TaskDefinition | None) -> JobProgram:
    """What ``%samza_run`` runs: the class of the ``%%samza_task`` / ``%%samza_app`` cell (``task``),
    else what ``config`` names (``task.class`` or ``app.class``). Mistakes are one NotebookError line; a
    config naming neither says how to define a task."""
    try:
        return JobProgram.of(task.cls) if task is not None else what_job_runs(config)
    except NoJobProgramError:
        raise NotebookError(
            "samza_run: no task: define one in a %%samza_task cell (or an application in a %%samza_app "
            "cell; or set task.class = package.module.Task)"
        ) from None
    except SamzaError as exc:
        raise NotebookError(f"samza_run: {exc}") from None


def ignored_class_note(config: Mapping[str, str], task: TaskDefinition | None) -> str | None:
    """The line saying that the ``%%samza_task`` / ``%%samza_app`` cell's class runs in place of the
    ``task.class`` / ``app.class`` the config names (None when the config names none, or no cell
    defined one)."""
    if task is None:
        return None
    for key in (TASK_CLASS_KEY, APP_CLASS_KEY):
        value = config.get(key, "").strip()
        if value:
            cell = "%%samza_app" if task.application else "%%samza_task"
            return f"note: {key} = {value} is not run: the {cell} cell's {task.name} runs in its place"
    return None


def planned_application(config: Config, program: JobProgram) -> tuple[Config, TaskFactory | None]:
    """For a StreamApplication not planned yet: the planned job config (its intermediate streams created)
    and the operator task's factory; otherwise ``config`` and None. A split application is refused: the
    notebook runs one job. Mistakes are one NotebookError line."""
    if not program.needs_planning:
        return config, None
    try:
        prepared = event_loop.run_blocking(program.plan(config))
    except SamzaError as exc:
        raise NotebookError(f"samza_run: {exc}") from None
    if len(prepared.jobs) != 1:
        raise NotebookError(
            f"samza_run: the application runs as {len(prepared.jobs)} jobs (app.split.jobs); the "
            "notebook runs one: drop app.split.jobs, pick one with app.stage = N, or use samza-nb run"
        )
    return prepared.jobs[0], prepared.task_factory


__all__ = ["ignored_class_note", "planned_application", "run_program"]
