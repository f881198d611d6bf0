"""Where a job's DuckDB files are, and the job identity their names carry; no DuckDB needed to ask.

A job keeps its files in ``<job.logged.store.base.dir>/<job.name>-<job.id>/``: the checkpoint file
``samza.duckdb`` and one state file per task partition, ``stores/partition-<n>.duckdb`` (their format:
:mod:`samza_nb.storage.duckdb.job_files`, which names these too).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Final

from samza_nb.config.catalogue import default_of, job_id, job_name
from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from samza_nb.config.config import Config

DATABASE_FILE_NAME: Final[str] = "samza.duckdb"
"""File name of the job's checkpoint file inside the job directory."""

STORES_DIRECTORY: Final[str] = "stores"
"""Directory (inside the job directory) of the per-task-partition state files."""

IN_MEMORY: Final[str] = ":memory:"
"""Pass as a path for a private in-memory database (nothing survives it; for tests)."""


# -- paths ---------------------------------------------------------------------------------------------
def _setting(config: Config, key: str) -> str:
    """``key`` from ``config``, else its default from the config key catalogue."""
    return config.get_str(key, default_of(key) or "")


DEFAULT_JOB_NAME: Final[str] = job_name({})
"""The job name used when ``job.name`` is not set (the config key catalogue's default)."""

DEFAULT_JOB_ID: Final[str] = job_id({})
"""The job id used when ``job.id`` is not set (the config key catalogue's default)."""


def job_identity(config: Config) -> tuple[str, str]:
    """``(job.name, job.id)`` of ``config`` (catalogue defaults when unset).

    Each must be usable as part of one directory name (non-empty, no path separator, not ``.``/``..``);
    otherwise a :class:`ConfigError` names the key.
    """
    values: list[str] = []
    for key in ("job.name", "job.id"):
        value = _setting(config, key).strip()
        if not value or value in {".", ".."} or "/" in value or "\\" in value or os.sep in value:
            raise ConfigError(
                f"{key}={value!r} cannot name the job's state directory: it must be non-empty and "
                "contain no path separator",
                key=key,
            )
        values.append(value)
    return values[0], values[1]


def job_directory(config: Config) -> Path:
    """The absolute directory of the job's files: ``<job.logged.store.base.dir>/<job.name>-<job.id>``."""
    job_name, job_id = job_identity(config)
    base = _setting(config, "job.logged.store.base.dir")
    return (Path(base).expanduser() / f"{job_name}-{job_id}").absolute()


def job_database_path(config: Config) -> Path:
    """The absolute path of the job's checkpoint file, ``<job directory>/samza.duckdb``.

    A ``job.name`` or ``job.id`` that cannot be a directory name is a :class:`ConfigError` naming the key.
    """
    return job_directory(config) / DATABASE_FILE_NAME


def state_directory(config: Config) -> Path:
    """The directory of the job's per-task-partition state files, ``<job directory>/stores``."""
    return job_directory(config) / STORES_DIRECTORY


def partition_state_path(config: Config, partition: int) -> Path:
    """The state file of the tasks of changelog partition ``partition``: ``stores/partition-<n>.duckdb``."""
    return state_directory(config) / f"partition-{partition}.duckdb"


def absolute_path(path: str | os.PathLike[str]) -> str:
    """``path`` as the absolute path a job database is known by (:data:`IN_MEMORY` stays as it is)."""
    raw = os.fspath(path)
    return raw if raw == IN_MEMORY else str(Path(raw).expanduser().absolute())


__all__ = [
    "DATABASE_FILE_NAME",
    "DEFAULT_JOB_ID",
    "DEFAULT_JOB_NAME",
    "IN_MEMORY",
    "STORES_DIRECTORY",
    "absolute_path",
    "job_database_path",
    "job_directory",
    "job_identity",
    "partition_state_path",
    "state_directory",
]
