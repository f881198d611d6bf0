"""What a job runs, from its config: a task (``task.class``) or a StreamApplication (``app.class``).

An application runs as one or more jobs (a split application: one per stage) that must be planned before
they start: :func:`needs_planning` says whether a config still is the application's own, and
:func:`prepare_configured_application` plans it into the jobs' configs. A planned job's config names the
application and carries its plan, and its tasks are the operator tasks that run it
(:func:`load_task_factory`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Final

from samza_nb.api.task_factory import task_factory
from samza_nb.config import Config
from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.operators.application import is_application
from samza_nb.operators.plan import APP_CLASS_KEY, APP_PLAN_KEY
from samza_nb.operators.prepare import PreparedApplication, prepare_application
from samza_nb.operators.task import operator_task_factory

TASK_CLASS_KEY: Final = "task.class"


def _import(config: Config, key: str) -> Any:
    """The object ``key`` names, imported with the working directory on ``sys.path``."""
    path = config.require(key)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    return import_dotted(path, key)


def runs_application(config: Config) -> bool:
    """True when the job runs a StreamApplication (``app.class``) rather than a task (``task.class``); a
    ConfigError when both or neither are set."""
    has_task = bool((config.get_str(TASK_CLASS_KEY) or "").strip())
    has_app = bool((config.get_str(APP_CLASS_KEY) or "").strip())
    if has_task and has_app:
        raise ConfigError(
            f"{TASK_CLASS_KEY} and {APP_CLASS_KEY} are both set: a job runs a task or an application",
            key=APP_CLASS_KEY,
        )
    if not has_task and not has_app:
        raise ConfigError(
            f"missing required config {TASK_CLASS_KEY} (the dotted path of the task class, e.g. "
            f"mypackage.tasks.MyTask) or {APP_CLASS_KEY} (of a StreamApplication)",
            key=TASK_CLASS_KEY,
        )
    return has_app


def needs_planning(config: Config) -> bool:
    """True for the config of an application that was not planned yet (no ``app.plan``)."""
    return runs_application(config) and not (config.get_str(APP_PLAN_KEY) or "").strip()


def load_application(config: Config) -> Any:
    """The StreamApplication class ``app.class`` names; a ConfigError naming the key when it cannot be
    imported or is not one."""
    app = _import(config, APP_CLASS_KEY)
    if not is_application(app):
        raise ConfigError(
            f"{APP_CLASS_KEY}={config[APP_CLASS_KEY]!r} is not a StreamApplication (subclass "
            "samza_nb.operators.StreamApplication)",
            key=APP_CLASS_KEY,
        )
    return app


def load_task_factory(config: Config) -> Callable[[], Any]:
    """The zero-argument factory of the job's tasks: the task ``task.class`` names, or for an application
    (``app.class``) the operator task that runs it (its config must be planned, which the runners do).
    Imported with the working directory on ``sys.path``; a ConfigError naming the key when it fails."""
    if runs_application(config):
        return operator_task_factory(load_application(config))
    target = _import(config, TASK_CLASS_KEY)
    try:
        return task_factory(target)
    except SamzaError as exc:
        raise ConfigError(f"{TASK_CLASS_KEY}={config[TASK_CLASS_KEY]!r}: {exc}", key=TASK_CLASS_KEY) from None


async def prepare_configured_application(config: Config) -> PreparedApplication:
    """Plan the application ``app.class`` names (see
    :func:`~samza_nb.operators.prepare.prepare_application`)."""
    return await prepare_application(load_application(config), config)


__all__ = [
    "TASK_CLASS_KEY",
    "load_application",
    "load_task_factory",
    "needs_planning",
    "prepare_configured_application",
    "runs_application",
]
