"""Where a finished job's files live on this machine: its Spark output generations, written Spark inputs,
job files, shipped code archives and commit records (what :mod:`.clean` counts and removes; nothing is
removed here)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from samza_nb.container.inputs import configured_systems
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from samza_nb.config import Config


@dataclass(frozen=True)
class OutputGeneration:
    """One generation of a job's Spark outputs under one output root: each stream's directory of it (files
    and ``_spark_metadata``), its directory of commits under way, and whether it is the current one."""

    number: int
    directories: tuple[Path, ...]
    records: Path
    current: bool


def output_generations(config: Config) -> list[OutputGeneration]:
    """Every output generation of the job's Spark systems (the one place that knows their layout:
    :mod:`samza_nb.systems.spark.outputs.generations`)."""
    from samza_nb.systems.spark.outputs.generations import (
        COMMITS_DIR,
        commits_directory,
        generation_name,
        generations,
        stream_directory,
    )

    job = _job_key(config)
    found = []
    for root in _spark_output_roots(config):
        numbers = generations(root, job)
        streams = sorted(p.name for p in root.iterdir() if p.is_dir() and p.name != COMMITS_DIR)
        for n in numbers:
            directories = tuple(
                d for stream in streams if (d := stream_directory(root, job, stream, n)).is_dir()
            )
            records = commits_directory(root, job) / generation_name(n)
            found.append(OutputGeneration(n, directories, records, n == numbers[-1]))
    return found


def _spark_systems(config: Config) -> list[str]:
    from samza_nb.systems.spark import SparkSystemFactory

    return [
        s for s in configured_systems(config) if isinstance(system_factory(config, s), SparkSystemFactory)
    ]


def _spark_output_roots(config: Config) -> list[Path]:
    from samza_nb.systems.spark.settings import output_root

    return sorted({output_root(config, system) for system in _spark_systems(config)})


def spark_input_directories(config: Config) -> list[Path]:
    """The directory of the Spark inputs the job wrote (none when it has no Spark system)."""
    from samza_nb.systems.spark.settings import job_files_directory

    return [job_files_directory(config) / "spark-input"] if _spark_systems(config) else []


def job_files_directories(config: Config) -> list[Path]:
    """The directory of the job's Spark job files (none when it has no Spark system)."""
    from samza_nb.systems.spark.settings import job_files_directory

    return [job_files_directory(config)] if _spark_systems(config) else []


def shipped_code(config: Config) -> list[Path]:
    """The directory of the job's shipped code archives, when there is one."""
    from samza_nb.runtime.spark.ship import shipped_code_directory

    directory = shipped_code_directory(config)
    return [directory] if directory.is_dir() else []


def commit_directories(config: Config) -> list[Path]:
    """The job's directory of commit records under each Spark output root."""
    from samza_nb.systems.spark.outputs.generations import commits_directory

    return [commits_directory(root, _job_key(config)) for root in _spark_output_roots(config)]


def _job_key(config: Config) -> str:
    return f"{config.job_name()}-{config.job_id()}"


__all__ = [
    "OutputGeneration",
    "commit_directories",
    "job_files_directories",
    "output_generations",
    "shipped_code",
    "spark_input_directories",
]
