"""Where a task's stores resume, and their restore from changelogs when the local state is missing or behind.

A task has two records of its progress: the offsets in its state file (committed with the store contents,
so always consistent with them) and the checkpoint of the checkpoint manager. The state file wins when it
is at least as far as the checkpoint in every changelog (a crash between the state commit and the checkpoint
write leaves it ahead); otherwise each store that is behind is restored from its changelog up to the
checkpointed changelog offset, and the task resumes from the checkpoint.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from samza_nb import crash_points
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import SamzaError
from samza_nb.observe import events as ev
from samza_nb.storage.changelog import ChangelogReader
from samza_nb.storage.duckdb.paths import job_identity
from samza_nb.storage.engine import StorageEngine
from samza_nb.storage.generation import GenerationMarker

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.observe.bus import EventBus
    from samza_nb.systems.base import SystemAdmin, SystemFactory

log = logging.getLogger(__name__)


class TimeSource(Protocol):
    """What restore progress events are stamped with (the container's clock fits)."""

    def now_ms(self) -> float:
        """The current time in ms."""
        ...


@dataclass(frozen=True)
class Resume:
    """Where a task resumes: ``checkpoint`` (None: from its inputs' start), and whether the task's state file
    must be rewritten to record it (``commit``: after a restore, or when the checkpoint is newer)."""

    checkpoint: Checkpoint | None
    commit: bool


@dataclass(frozen=True)
class Restorer:
    """Brings a task's stores to the point its checkpoint says, from their changelogs.

    Changelogs are read with the ``admins`` and ``factories`` of their systems. Publishes
    :class:`~samza_nb.observe.events.StoreRestoreProgress` events on ``bus`` while restoring (when it has
    subscribers), stamped by ``clock``, the last one with ``done=True``.
    """

    config: Config
    admins: Mapping[str, SystemAdmin]
    factories: Mapping[str, SystemFactory]
    bus: EventBus
    clock: TimeSource

    async def reconcile(
        self,
        task_name: str,
        stores: Collection[str],
        changelogs: Mapping[str, SystemStreamPartition],
        engines: Mapping[str, StorageEngine],
        local: Checkpoint | None,
        remote: Checkpoint | None,
    ) -> Resume:
        """Decide where ``task_name`` resumes (``local``: its state file's offsets; ``remote``: its
        checkpoint) and restore the stores (of ``stores``, with changelog SSPs ``changelogs``) that are
        behind; the engines hold the restored records as pending writes."""
        restore_to: dict[str, tuple[str | None, str]] = {}
        if remote is not None:
            for name, ssp in changelogs.items():
                target = remote.changelog_offsets.get(name)
                if target is None:
                    continue
                have = local.changelog_offsets.get(name) if local is not None else None
                if have is None or self.admins[ssp.system].offset_comparator(have, target) < 0:
                    restore_to[name] = (have, target)
        if local is not None and not restore_to:
            if remote is not None and local != remote:
                log.info(
                    "task %s resumes from its state file's offsets (newer than the checkpoint)", task_name
                )
            return Resume(local, commit=False)
        if local is None and remote is not None:
            lost = [name for name in stores if name not in changelogs]
            if lost:
                log.warning(
                    "task %s has a checkpoint but no local state, and stores %s have no changelog: "
                    "they start empty",
                    task_name,
                    ", ".join(lost),
                )
        for name, (have, target) in restore_to.items():
            await self.restore(task_name, name, changelogs[name], engines[name], have, target)
        return Resume(remote, commit=remote is not None or bool(restore_to))

    async def restore(
        self,
        task_name: str,
        store: str,
        ssp: SystemStreamPartition,
        engine: StorageEngine,
        after: str | None,
        target: str,
    ) -> int:
        """Apply the changelog records of ``ssp`` after offset ``after`` (from its oldest when None) up to
        ``target`` to ``engine``; the number applied. SamzaError when the changelog is empty. Records
        before a generation marker are dropped (the engine is truncated there: see :mod:`.generation`);
        a ForeignChangelogError when the last marker read is another job's."""
        admin = self.admins[ssp.system]
        metadata = (await admin.get_metadata([ssp.stream])).get(ssp.stream, {}).get(ssp.partition)
        if metadata is None or metadata.newest is None:
            raise SamzaError(
                f"cannot restore store {store!r} of task {task_name!r}: changelog {ssp} is empty, "
                f"but the checkpoint says it reached offset {target}"
            )
        start = admin.offset_after(after) if after is not None else (metadata.oldest or "0")
        total = distance(start, target)
        reader = ChangelogReader(self.factories[ssp.system], ssp, self.config, admin)
        job_name, job_id = job_identity(self.config)
        restored = 0
        last_marker: GenerationMarker | None = None
        async for batch in reader.read(start, target):
            if isinstance(batch, GenerationMarker):
                # A generation begins: what came before it (an older generation, or another job's use
                # of the topic) is not this state.
                last_marker = batch
                engine.truncate()
                restored = 0
                continue
            engine.restore_batch(batch)
            restored += len(batch)
            if crash_points.ARMED:
                crash_points.reached("restore.mid")
            self._progress(task_name, store, restored, total, done=False)
        if last_marker is not None and not last_marker.is_of(job_name, job_id):
            raise last_marker.refuse(ssp, store, job_name, job_id)
        self._progress(task_name, store, restored, total, done=True)
        log.info("restored store %s of task %s: %d changelog records", store, task_name, restored)
        return restored

    def _progress(self, task_name: str, store: str, restored: int, total: int, *, done: bool) -> None:
        if self.bus.active:
            self.bus.publish(
                ev.StoreRestoreProgress(self.clock.now_ms(), task_name, store, restored, total, done)
            )


def distance(start: str, target: str) -> int:
    """How many records lie from offset ``start`` to ``target`` inclusive, for integer offsets (0 when the
    offsets are not integers: the total is then unknown)."""
    try:
        return max(int(target) - int(start) + 1, 0)
    except ValueError:
        return 0


__all__ = ["Restorer", "Resume", "TimeSource", "distance"]
