"""Where a job's output generations live: one directory, with its own ``_spark_metadata`` log, per output
stream, job and generation.

Under the output root ``R`` (``systems.<s>.spark.output.dir``, default ``<job files>/spark-output``):

- ``R/<stream>/<job.name>-<job.id>/g<NNNNNN>/``: the parquet files of generation N of ``stream`` and its
  commit log ``_spark_metadata/`` (what a plain ``spark.read.parquet`` of that directory lists);
- ``R/_samza_commits/<job.name>-<job.id>/g<NNNNNN>/``: generation N began (the job's generations are these
  directories; the newest is the current one), with a directory per task for its commit under way
  (``<task>/pending.json``, see :mod:`.commits`).

A generation begins when the job starts over (``reset.offset`` on a non-bootstrap input, ``samza-nb reset``);
a new ``job.id`` is another job, with its own generations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from samza_nb.config import Config

COMMITS_DIR: Final = "_samza_commits"
"""The directory under an output root that holds the generations and commits under way (``_``: Spark's
readers skip it)."""
_GENERATION = re.compile(r"^g(\d{6})$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")


def safe_name(text: str) -> str:
    """``text`` made safe as a file or directory name Spark reads (no leading ``.`` or ``_``)."""
    safe = _UNSAFE.sub("_", text).lstrip("._")
    return safe or "task"


def generation_name(generation: int) -> str:
    """The directory name of generation ``generation``: ``g000001``."""
    return f"g{generation:06d}"


def commits_directory(root: Path, job: str) -> Path:
    """``R/_samza_commits/<job>``: the job's generations."""
    return root / COMMITS_DIR / safe_name(job)


def generations(root: Path, job: str) -> list[int]:
    """The job's generation numbers under ``root``, ascending (empty before its first output)."""
    directory = commits_directory(root, job)
    if not directory.is_dir():
        return []
    return sorted(int(m.group(1)) for p in directory.iterdir() if (m := _GENERATION.match(p.name)))


def current_generation(root: Path, job: str) -> int | None:
    """The newest generation of ``job`` under ``root``, None before its first."""
    found = generations(root, job)
    return found[-1] if found else None


def begin_generation(root: Path, job: str, generation: int) -> Path:
    """Make generation ``generation`` exist (kept when another process made it first); its directory."""
    directory = commits_directory(root, job) / generation_name(generation)
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def stream_directory(root: Path, job: str, stream: str, generation: int) -> Path:
    """``R/<stream>/<job>/g<N>``: the files and the ``_spark_metadata`` log of one generation of a stream."""
    return root / stream / safe_name(job) / generation_name(generation)


def current_stream_directories(root: Path, job: str) -> dict[str, Path]:
    """The current generation's directory of each stream that has one."""
    generation = current_generation(root, job)
    if generation is None or not root.is_dir():
        return {}
    found = {}
    for path in sorted(root.iterdir()):
        if path.is_dir() and path.name != COMMITS_DIR:
            directory = stream_directory(root, job, path.name, generation)
            if directory.is_dir():
                found[path.name] = directory
    return found


@dataclass(frozen=True)
class OutputGeneration:
    """One generation of a job's output stream: its number, its directory (files and ``_spark_metadata``)
    and whether it is the current one (what :func:`~samza_nb.systems.spark.read_output` reads)."""

    generation: int
    directory: Path
    current: bool


def output_generations(config: Config, system: str, stream: str) -> list[OutputGeneration]:
    """Every generation of output ``stream`` of Spark system ``system`` written by the job of ``config``
    (``job.name``, ``job.id``), oldest first; the last is the current one. An old generation's directory
    is no longer written nor read by the job: removing it (``samza-nb clean``) loses only that output."""
    from samza_nb.systems.spark.settings import job_key, output_root

    root, job = output_root(config, system), job_key(config)
    numbers = generations(root, job)
    return [OutputGeneration(n, stream_directory(root, job, stream, n), n == numbers[-1]) for n in numbers]


def current_output_directory(config: Config, system: str, stream: str) -> Path:
    """The directory of the current generation of output ``stream`` (the first generation's before any
    output): what ``spark.read.parquet`` is pointed at to read the job's committed output."""
    from samza_nb.systems.spark.settings import job_key, output_root

    root, job = output_root(config, system), job_key(config)
    return stream_directory(root, job, stream, current_generation(root, job) or 1)


__all__ = [
    "COMMITS_DIR",
    "OutputGeneration",
    "current_output_directory",
    "output_generations",
    "safe_name",
]
