"""Resetting a job: it starts over (the reset table of docs/how-to/operating.md), the one implementation
behind ``samza-nb reset`` and ``%samza_checkpoints --reset``.

A reset drops, together: the job's checkpoints wherever they live (the checkpoint manager's store: the
DuckDB checkpoint file, a Kafka checkpoint topic or a durable log stream, tombstoned; or the notebook's
in-memory ones), its local state (the state files under ``<job.logged.store.base.dir>/<job.name>-<job.id>/
stores``, which hold the offsets their state reflects), and, for Spark outputs, the current generation
(a new one begins, empty). The changelogs start anew: the next run resumes from no checkpoint, so each
task writes a generation marker first and no restore replays what came before it
(:mod:`samza_nb.storage.generation`). It is refused while the job runs: another process holds its files,
or a driver holds a live claim on the job's coordinator stream (:mod:`samza_nb.coordinator.driver_claim`;
the only sign of a job whose checkpoints live on Kafka and that has no stores).
"""

from __future__ import annotations

import shutil
from collections.abc import MutableMapping
from typing import TYPE_CHECKING

from samza_nb.checkpoint.base import (
    ForgettingCheckpointManager,
    checkpoint_factory_path,
    load_checkpoint_manager,
)
from samza_nb.config.stores import changelog_stream, configured_store_names
from samza_nb.container.event_loop import run_blocking
from samza_nb.container.inputs import configured_systems
from samza_nb.coordinator.driver_claim import LEASE_KEY, DriverClaim, stale
from samza_nb.coordinator.stream_store import CoordinatorStreamStore
from samza_nb.errors import CheckpointError, JobRunningError, SamzaError
from samza_nb.storage.duckdb.claim import claim_directory
from samza_nb.storage.duckdb.job_files import close_database, open_database
from samza_nb.storage.duckdb.paths import job_database_path, job_directory, state_directory
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from pathlib import Path

    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.config import Config


def reset_job(config: Config, *, checkpoints: MutableMapping[str, Checkpoint] | None = None) -> str:
    """Make job ``config`` start over (see the module); the one line saying what was dropped.

    ``checkpoints``: the job's checkpoints when they are kept in this process (a notebook's), instead of
    the store of ``task.checkpoint.factory``. A :class:`JobRunningError` naming the file when another
    process runs the job; a SamzaError when its checkpoint manager cannot forget checkpoints.
    """
    job = f"{config.job_name()!r} (job.id {config.job_id()!r})"
    refuse_while_running(config, job)
    if checkpoints is not None:
        tasks = sorted(checkpoints)
        checkpoints.clear()
        where = "in memory"
    else:
        tasks = run_blocking(_forget_checkpoints(config))
        where = checkpoint_factory_path(config).rsplit(".", 1)[-1]
    states = state_directory(config)
    partitions = sorted(states.glob("partition-*.duckdb")) if states.is_dir() else []
    shutil.rmtree(states, ignore_errors=True)
    parts = [
        f"checkpoints of {len(tasks)} task(s) ({where})",
        f"state files of {len(partitions)} partition(s)",
    ]
    changelogs = sorted(
        {str(s) for name in configured_store_names(config) if (s := changelog_stream(config, name))}
    )
    if changelogs:
        parts.append(f"changelogs {', '.join(changelogs)} (they start anew at the next run)")
    generations = _new_output_generations(config)
    if generations:
        parts.append(f"Spark outputs ({generations}: a new generation)")
    return (
        f"job {job} reset, dropped: {'; '.join(parts)}; the next run starts from each input's offset.default"
    )


def refuse_while_running(config: Config, job: str, action: str = "reset") -> None:
    """A :class:`JobRunningError` (``cannot <action> job ... while it runs: ...``) when the job runs: another
    process holds its files (the claim on its directory: a starting run; DuckDB's lock on its checkpoint or
    state files: a running one), or a driver holds a live claim on its coordinator stream (a run anywhere,
    whatever its checkpoints and stores)."""
    path = job_database_path(config)
    try:
        claim_directory(str(path)).release()
        for file in _duckdb_files(job_directory(config)):
            close_database(open_database(str(file)))
    except CheckpointError as exc:
        raise JobRunningError(f"cannot {action} job {job} while it runs: {exc}") from None
    driver = run_blocking(running_driver(config))
    if driver is not None:
        raise JobRunningError(
            f"cannot {action} job {job} while it runs: its driver, {driver.describe()}, holds it "
            f"(stop it first; a driver that died is taken as gone after {LEASE_KEY} = "
            f"{config.value(LEASE_KEY)} ms)"
        )


async def running_driver(config: Config) -> DriverClaim | None:
    """The live claim of the driver that runs job ``config`` now (its coordinator stream read to its end);
    None when no driver holds one (none ever did, it was released, or it is stale)."""
    store = CoordinatorStreamStore(config)
    await store.start()
    try:
        claim = store.driver()
    finally:
        await store.stop()
    if claim is None or stale(claim, config.value(LEASE_KEY)) is not None:
        return None
    return claim


def _duckdb_files(directory: Path) -> list[Path]:
    if not directory.is_dir():
        return []
    return sorted(p for p in directory.rglob("*.duckdb") if p.is_file())


async def _forget_checkpoints(config: Config) -> list[str]:
    manager = load_checkpoint_manager(config)
    if not isinstance(manager, ForgettingCheckpointManager):
        raise SamzaError(
            f"task.checkpoint.factory={checkpoint_factory_path(config)}: its checkpoint manager cannot "
            "forget checkpoints (it has no forget_all()), so the job cannot be reset"
        )
    await manager.start()
    try:
        return await manager.forget_all()
    finally:
        await manager.stop()


def _new_output_generations(config: Config) -> int:
    """Begin a new output generation in every Spark system of the job; how many tasks had output."""
    from samza_nb.systems.spark import SparkSystemFactory
    from samza_nb.systems.spark.outputs.commits import start_new_generations
    from samza_nb.systems.spark.settings import job_key, output_root

    count = 0
    for name in configured_systems(config):
        if isinstance(system_factory(config, name), SparkSystemFactory):
            count += start_new_generations(output_root(config, name), job_key(config))
    return count


__all__ = ["refuse_while_running", "reset_job", "running_driver"]
