"""Carrying checkpoints over when a job's default checkpoint store changes with its container count.

Without ``task.checkpoint.factory`` a job of one container keeps its checkpoints in its DuckDB file and a
job of several containers on the durable log (one DuckDB file cannot be written by several processes).
So that changing ``job.container.count`` neither forgets the checkpoints (and skips or replays input) nor
needs a manual step, the job coordinator copies, before the containers start, the last checkpoint of every
task that has none in the store now in use from the store used before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint.base import (
    CHECKPOINT_FACTORY_KEY,
    DEFAULT_CHECKPOINT_FACTORY,
    checkpoint_factory_path,
    load_checkpoint_manager,
)
from samza_nb.checkpoint.log import LogCheckpointManager
from samza_nb.config.stores import changelog_stream
from samza_nb.errors import ConfigError
from samza_nb.storage.duckdb.paths import job_database_path

if TYPE_CHECKING:
    from samza_nb.config.config import Config


async def carry_over_default_checkpoints(
    config: Config, changelog_partitions: Mapping[str, int]
) -> list[str]:
    """Copy to the job's default checkpoint store the last checkpoint of each task of
    ``changelog_partitions`` (task name → its changelog partition) that has none there but has one in the
    other default store (the one of the other container count). Nothing happens when
    ``task.checkpoint.factory`` is set or the other store does not exist. Returns the tasks whose
    checkpoint was carried over."""
    if (config.get_str(CHECKPOINT_FACTORY_KEY, "") or "").strip():
        return []
    several = config.get_int("job.container.count", 1) > 1
    previous = config.with_overrides({"job.container.count": "1" if several else "2"})
    if not _store_exists(previous):
        return []
    names = sorted(changelog_partitions)
    source, target = load_checkpoint_manager(previous), load_checkpoint_manager(config)
    for name in names:
        source.register(name)
        target.register(name)
    carried: list[str] = []
    await source.start()
    try:
        await target.start()
        try:
            for name in names:
                if await target.read_last_checkpoint(name) is not None:
                    continue
                checkpoint = await source.read_last_checkpoint(name)
                if checkpoint is not None:
                    checkpoint = _with_changelog_ssps(config, checkpoint, changelog_partitions[name])
                    await target.write_checkpoint(name, checkpoint)
                    carried.append(name)
        finally:
            await target.stop()
    finally:
        await source.stop()
    return carried


def _with_changelog_ssps(config: Config, checkpoint: Checkpoint, partition: int) -> Checkpoint:
    """``checkpoint`` with the changelog SSP of each store it has an offset of: the DuckDB store does not
    keep them, the durable log's (Samza's format) keys the offsets by them."""
    ssps = dict(checkpoint.changelog_ssps)
    for store in checkpoint.changelog_offsets:
        stream = changelog_stream(config, store)
        if store not in ssps and stream is not None:
            ssps[store] = SystemStreamPartition(stream.system, stream.stream, partition)
    return Checkpoint(checkpoint.offsets, checkpoint.changelog_offsets, ssps)


def _store_exists(config: Config) -> bool:
    """Whether the default checkpoint store of ``config`` has been created (never creating it)."""
    if checkpoint_factory_path(config) == DEFAULT_CHECKPOINT_FACTORY:
        return job_database_path(config).exists()
    try:
        manager = load_checkpoint_manager(config)
    except ConfigError:  # e.g. a default system that is not a durable log: no such store
        return False
    return isinstance(manager, LogCheckpointManager) and manager.stream_directory.exists()


__all__ = ["carry_over_default_checkpoints"]
