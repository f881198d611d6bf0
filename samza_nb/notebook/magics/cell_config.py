"""``%%samza_config`` and ``%samza_config key=value ...``: the job config of a notebook, from cell text.

A config cell holds ``.properties`` text (Samza's key names); it replaces the notebook's config, so
re-running a cell gives exactly the config it shows. The line form sets or overrides single keys. Both
check every known key's value at once, so a typo fails in the config cell, not later in ``%samza_run``:
so does an unknown key that is a near miss of a known one (``task.max.concurency``, or a key under a
misspelt system name), with an error naming the key it resembles. A key far from every known one (a
plug-in's or the task's own: ``myapp.greeting``) is taken as it is.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from samza_nb.config import Config, job_name
from samza_nb.config.loaders import parse_properties
from samza_nb.errors import ConfigError
from samza_nb.notebook.display.views import plural
from samza_nb.notebook.errors import NotebookError
from samza_nb.runtime.config_check import check_job_config

CHECKPOINT_FACTORY_KEY = "task.checkpoint.factory"
STATE_DIR_KEY = "job.logged.store.base.dir"
CONTAINER_COUNT_KEY = "job.container.count"
NOTEBOOK_CHECKPOINTS = "in-memory checkpoints kept for this kernel's lifetime"


def parse_config_cell(text: str) -> dict[str, str]:
    """The keys of a ``%%samza_config`` cell; a NotebookError naming the line when one is malformed (line
    numbers as the notebook shows them: the ``%%samza_config`` line is line 1)."""
    try:
        values = parse_properties("\n" + text, source="samza_config cell")
    except ConfigError as exc:
        raise NotebookError(str(exc)) from None
    check_values(values)
    return values


def parse_assignments(line: str) -> dict[str, str]:
    """The ``key=value`` words of ``%samza_config`` (shell quoting allowed: ``key="a b"``)."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise NotebookError(f"samza_config: cannot split {line!r}: {exc}") from None
    values: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key.strip():
            raise NotebookError(
                f"samza_config: {word!r} is not key=value (e.g. %samza_config task.max.concurrency=4)"
            )
        values[key.strip()] = value.strip()
    check_values(values, systems=False)  # the system names are checked with the whole config
    return values


def check_values(values: Mapping[str, str], *, systems: bool = True) -> Config:
    """``values`` as a Config, every known key checked and no key misspelt; a NotebookError naming the
    first bad key: ``samza_config: unknown key task.max.concurency: did you mean task.max.concurrency?``.
    ``systems``: also refuse keys under a system name that has no factory but is close to one that has
    (only a whole config can tell: ``False`` for keys that will join others)."""
    try:
        config = Config(values).validate()
        check_job_config(config, whole=systems)
        return config
    except ConfigError as exc:
        raise NotebookError(f"samza_config: {exc}") from None


def as_properties(config: Mapping[str, str]) -> str:
    """``config`` as ``.properties`` text, one ``key = value`` a line, in the order it was given."""
    return "\n".join(f"{key} = {value}" for key, value in config.items())


def summary(config: Mapping[str, str]) -> str:
    """One line describing a job config: name, inputs, keys, and where its checkpoints go."""
    name = job_name(config)
    inputs = config.get("task.inputs", "").strip() or "(task.inputs not set yet)"
    factory = config.get(CHECKPOINT_FACTORY_KEY, "").strip()
    count = container_count(config)
    if factory:
        checkpoints = f"checkpoints from {factory}"
    elif count > 1:
        checkpoints = f"{count} container processes, checkpoints in the durable log"
    else:
        checkpoints = NOTEBOOK_CHECKPOINTS
    return f"job {name!r}: {plural(len(config), 'key')}; inputs {inputs}; {checkpoints}"


def container_count(config: Mapping[str, str]) -> int:
    """``job.container.count`` of checked values (1 when unset)."""
    return Config(config).get_int(CONTAINER_COUNT_KEY, 1)


def effective_config(user: Mapping[str, str], state_dir: str) -> Config:
    """The config a notebook job runs with: the user's, plus the notebook's defaults.

    Unless the user set ``task.checkpoint.factory``, checkpoints are kept in memory for the kernel's
    lifetime (the session passes the manager), and store state goes under ``state_dir``, a directory that
    lives as long as the kernel: state and checkpoints then live and die together with in-memory streams.
    (The embedded DuckDB default would outlive the kernel while in-memory streams do not, so a re-run
    notebook would resume from a checkpoint its new streams know nothing about.) A job of several
    containers (``job.container.count`` > 1) reads durable inputs, so it keeps the runtime's defaults:
    checkpoints in the durable log under ``job.logged.store.base.dir``.
    """
    values = dict(user)
    if uses_notebook_checkpoints(values):
        values.setdefault(STATE_DIR_KEY, state_dir)
    return Config(values)


def uses_notebook_checkpoints(config: Mapping[str, str]) -> bool:
    """True when the job keeps its checkpoints in the notebook session: no factory configured, and one
    container (a job of several keeps them in the durable log, where every container process writes)."""
    return not config.get(CHECKPOINT_FACTORY_KEY, "").strip() and container_count(config) <= 1


__all__ = [
    "as_properties",
    "check_values",
    "container_count",
    "effective_config",
    "parse_assignments",
    "parse_config_cell",
    "summary",
    "uses_notebook_checkpoints",
]
