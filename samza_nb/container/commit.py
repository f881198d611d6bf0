"""A container's commit of one task, in Samza's order: stores, producers, state, checkpoint."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb import crash_points
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.observe import events as ev
from samza_nb.systems.base import CommittingProducer

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.checkpoint.base import CheckpointManager
    from samza_nb.container.clock import Clock
    from samza_nb.container.loop.collector import OutputBuffer
    from samza_nb.observe.bus import EventBus
    from samza_nb.storage.manager import StorageManager
    from samza_nb.systems.base import SystemProducer


def committing_producers(producers: Mapping[str, SystemProducer]) -> list[CommittingProducer]:
    """The producers whose output counts only with the checkpoint that covers it."""
    return [p for p in producers.values() if isinstance(p, CommittingProducer)]


class CommitSequence:
    """Commits a task of a started container: flush its stores, flush the producers, commit the stores'
    state with the offsets it reflects, then write the checkpoint (input and changelog offsets); a
    committing producer prepares before the checkpoint is written and is told once it is."""

    def __init__(
        self,
        storage: StorageManager | None,
        outputs: OutputBuffer | None,
        producers: Mapping[str, SystemProducer],
        checkpoints: CheckpointManager,
        bus: EventBus,
        clock: Clock,
    ) -> None:
        """The container's started parts (``storage``/``outputs`` None: it has none)."""
        self._storage = storage
        self._outputs = outputs
        self._producers = producers
        self._committing = committing_producers(producers)
        self._checkpoints = checkpoints
        self._bus = bus
        self._clock = clock

    async def commit(self, task: str, offsets: dict[SystemStreamPartition, str]) -> None:
        """Commit ``task`` at ``offsets`` (its low watermark)."""
        storage = self._storage
        if storage is not None:
            storage.flush(task)
        if crash_points.ARMED:
            crash_points.reached("commit.stores-flushed")
        if self._outputs is not None:
            self._outputs.flush()
        for producer in self._producers.values():
            await producer.flush(task)
        if crash_points.ARMED:
            crash_points.reached("commit.producers-flushed")
        changelog_offsets = await storage.commit(task, offsets) if storage is not None else {}
        changelog_ssps = storage.changelog_ssps(task) if storage is not None else {}
        if crash_points.ARMED:
            crash_points.reached("commit.state-written")
        checkpoint = Checkpoint(offsets, changelog_offsets, changelog_ssps)
        committing = self._committing
        for producer in committing:
            await producer.prepare_commit(task, checkpoint)
        if crash_points.ARMED and committing:
            crash_points.reached("commit.outputs-prepared")
        await self._checkpoints.write_checkpoint(task, checkpoint)
        if crash_points.ARMED:
            crash_points.reached("commit.checkpoint-written")
        for producer in committing:
            await producer.commit_done(task, checkpoint)
        if self._bus.active:
            self._bus.publish(ev.Committed(self._clock.now_ms(), task, dict(offsets)))
