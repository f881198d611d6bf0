"""What a job runs, decided once: a task (``task.class``) or a StreamApplication (``app.class``).

:func:`what_job_runs` reads a config's ``task.class`` / ``app.class`` (exactly one must be set) and
``app.plan`` once and returns a :class:`JobProgram`; :meth:`JobProgram.of` makes one of a task or
application given as an object. Runners compute it once and ask it: ``needs_planning`` (an application
whose config still is its own must be planned into its jobs' configs first: :meth:`JobProgram.plan`) and
``task_factory()`` (the task's factory; for a planned application the operator task that runs it). The
class a config names is imported when first needed (with the working directory on ``sys.path``), so a
process that only passes the config on (to container processes, to Spark) never imports it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from samza_nb.api.task_factory import task_factory
from samza_nb.config import Config
from samza_nb.config.app_keys import APP_CLASS_KEY, APP_PLAN_KEY
from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError, SamzaError

if TYPE_CHECKING:
    from samza_nb.operators.prepare import PreparedApplication

TASK_CLASS_KEY: Final = "task.class"

TaskFactory = Callable[[], Any]

_APPLICATION_MODULE = "samza_nb.operators.application"


def is_application(obj: object) -> bool:
    """True for a StreamApplication subclass or instance. The operators are imported only by a job that
    runs an application: an object can only be one once they were imported, so a task's job never pays
    for them."""
    module = sys.modules.get(_APPLICATION_MODULE)
    return module is not None and bool(module.is_application(obj))


class NoJobProgramError(ConfigError):
    """The config names neither ``task.class`` nor ``app.class`` (a ConfigError naming both keys)."""


class JobProgram:
    """What a job runs: a task, or a StreamApplication (``runs_application``), decided once.

    ``load`` returns the task factory (a task) or the StreamApplication class or instance (an application);
    it is called once, when first needed. ``planned``: the config the application runs under carries its
    plan (``app.plan``: one planned job's config), so its tasks are the operator tasks that run it; an
    application not planned yet ``needs_planning``. ``source`` says where it came from (for messages).
    Make one with :func:`what_job_runs` (from a config) or :meth:`of` (from an object).
    """

    def __init__(
        self,
        load: Callable[[], Any],
        *,
        runs_application: bool,
        planned: bool = False,
        source: str = "",
    ) -> None:
        self._load = load
        self.runs_application = runs_application
        self.planned = planned
        self.source = source

    @classmethod
    def of(cls, target: Any) -> JobProgram:
        """The program of ``target`` given as an object: a StreamApplication (class or instance; planned
        when the job starts), else a task (a class, a zero-argument factory or an instance; a SamzaError
        naming it when it is none of them)."""
        if is_application(target):
            return cls(lambda: target, runs_application=True, source=repr(target))
        factory = task_factory(target)
        return cls(lambda: factory, runs_application=False, source=repr(target))

    @functools.cached_property
    def _loaded(self) -> Any:
        return self._load()

    @property
    def needs_planning(self) -> bool:
        """True for an application whose config is not one planned job's yet (no ``app.plan``)."""
        return self.runs_application and not self.planned

    @property
    def application(self) -> Any:
        """The StreamApplication (class or instance); a SamzaError for a task's program, a ConfigError
        naming ``app.class`` when it cannot be imported or is not one."""
        if not self.runs_application:
            raise SamzaError(f"the job runs a task ({self.source}), not a StreamApplication")
        return self._loaded

    def task_factory(self) -> TaskFactory:
        """The zero-argument factory of the job's tasks: the task's, or for an application the operator
        task that runs it (under a planned config: the runners plan first, see :attr:`needs_planning`).
        A ConfigError naming the key when the class a config names cannot be imported or is not one."""
        if self.runs_application:
            from samza_nb.operators.task import operator_task_factory

            return operator_task_factory(self.application)
        factory: TaskFactory = self._loaded
        return factory

    async def plan(self, config: Config) -> PreparedApplication:
        """Plan the application under ``config`` (see
        :func:`~samza_nb.operators.prepare.prepare_application`): its jobs' configs and intermediate
        streams."""
        from samza_nb.operators.prepare import prepare_application

        return await prepare_application(self.application, config)

    def __repr__(self) -> str:
        what = "application" if self.runs_application else "task"
        planned = " (planned)" if self.planned else ""
        return f"JobProgram({what} {self.source}{planned})"


def what_job_runs(config: Config) -> JobProgram:
    """What the job of ``config`` runs: the task ``task.class`` names or the StreamApplication of
    ``app.class`` (planned when ``app.plan`` is set). A ConfigError naming the keys when both are set, a
    :class:`NoJobProgramError` when neither is. The class is imported when the program first needs it."""
    task_class = (config.get_str(TASK_CLASS_KEY) or "").strip()
    app_class = (config.get_str(APP_CLASS_KEY) or "").strip()
    if task_class and app_class:
        raise ConfigError(
            f"{TASK_CLASS_KEY} and {APP_CLASS_KEY} are both set: a job runs a task or an application",
            key=APP_CLASS_KEY,
        )
    if app_class:
        planned = bool((config.get_str(APP_PLAN_KEY) or "").strip())
        return JobProgram(
            lambda: _load_application(config),
            runs_application=True,
            planned=planned,
            source=f"{APP_CLASS_KEY}={app_class}",
        )
    if task_class:
        return JobProgram(
            lambda: _load_task_factory(config),
            runs_application=False,
            source=f"{TASK_CLASS_KEY}={task_class}",
        )
    raise NoJobProgramError(
        f"missing required config {TASK_CLASS_KEY} (the dotted path of the task class, e.g. "
        f"mypackage.tasks.MyTask) or {APP_CLASS_KEY} (of a StreamApplication)",
        key=TASK_CLASS_KEY,
    )


def load_task_factory(config: Config) -> TaskFactory:
    """The zero-argument factory of the job's tasks: the task ``task.class`` names, or for an application
    (``app.class``) the operator task that runs it (its config must be planned, which the runners do).
    Imported with the working directory on ``sys.path``; a ConfigError naming the key when it fails."""
    return what_job_runs(config).task_factory()


def _import(config: Config, key: str) -> Any:
    """The object ``key`` names, imported with the working directory on ``sys.path``."""
    path = config.require(key)
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    return import_dotted(path, key)


def _load_application(config: Config) -> Any:
    app = _import(config, APP_CLASS_KEY)
    if not is_application(app):
        raise ConfigError(
            f"{APP_CLASS_KEY}={config[APP_CLASS_KEY]!r} is not a StreamApplication (subclass "
            "samza_nb.operators.StreamApplication)",
            key=APP_CLASS_KEY,
        )
    return app


def _load_task_factory(config: Config) -> TaskFactory:
    target = _import(config, TASK_CLASS_KEY)
    try:
        return task_factory(target)
    except SamzaError as exc:
        raise ConfigError(f"{TASK_CLASS_KEY}={config[TASK_CLASS_KEY]!r}: {exc}", key=TASK_CLASS_KEY) from None


__all__ = [
    "TASK_CLASS_KEY",
    "JobProgram",
    "NoJobProgramError",
    "TaskFactory",
    "load_task_factory",
    "what_job_runs",
]
