"""A point-in-time view of a running container, for dashboards, magics and the CLI (cheap to take)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.api.metadata import OffsetReset
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.container.loop.task_instance import TaskInstance
    from samza_nb.observe.states import ContainerState


@dataclass(frozen=True, slots=True)
class PartitionStatus:
    """One input partition of a task: last processed (released) and last committed offsets, and whether
    its end-of-stream was reached; the offset it started at, the messages of it processed, and the
    messages before its start that the job does not read (0 unless it started at its offset default past
    older messages, and only for integer offsets); ``resets``: the times its consumer moved it because its
    position did not exist (a checkpoint past the log's end), oldest first."""

    ssp: SystemStreamPartition
    processed_offset: str | None
    committed_offset: str | None
    ended: bool
    starting_offset: str | None = None
    processed: int = 0
    before_start: int = 0
    resets: tuple[OffsetReset, ...] = ()


@dataclass(frozen=True, slots=True)
class InFlightStatus:
    """The oldest message of a task not released yet (it holds the task's low watermark, and so its next
    checkpoint, back): its partition, offset, and the container clock's time it started (ms)."""

    ssp: SystemStreamPartition
    offset: str
    started_ms: float


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """One task: messages in flight against its limit (and the most at once since the start), processed
    count, pending operations, partitions, and its oldest message not released yet."""

    name: str
    in_flight: int
    max_concurrency: int
    processed: int
    need_commit: bool
    need_window: bool
    end_of_stream: bool
    done: bool
    partitions: tuple[PartitionStatus, ...]
    peak_in_flight: int = 0
    oldest_in_flight: InFlightStatus | None = None


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """The container's lifecycle state, total processed messages and its tasks."""

    state: ContainerState
    processed: int
    tasks: tuple[TaskStatus, ...]

    @property
    def resets(self) -> tuple[OffsetReset, ...]:
        """Every partition move of every task (see :attr:`PartitionStatus.resets`)."""
        return tuple(r for task in self.tasks for p in task.partitions for r in p.resets)


def task_status(ti: TaskInstance) -> TaskStatus:
    """The status of one task instance. A task that processed messages on the inline path (one at a time,
    no callbacks) had one in flight at its peak."""
    oldest = None
    try:  # (read off the loop thread, e.g. by %%samza_sql, the loop may release it meanwhile)
        callback = ti.unreleased[0]
    except IndexError:
        pass
    else:
        oldest = InFlightStatus(callback.ssp, callback.offset, callback.started_ms)
    peak = ti.peak_in_flight or (1 if ti.processed else 0)
    return TaskStatus(
        ti.name,
        ti.in_flight,
        ti.max_concurrency,
        ti.processed,
        ti.need_commit,
        ti.need_window,
        ti.end_of_stream,
        ti.done,
        tuple(
            PartitionStatus(
                ssp,
                ti.last_offsets.get(ssp),
                ti.committed_offsets.get(ssp),
                ssp not in ti.open_ssps,
                ti.starting_offsets.get(ssp),
                ti.processed_by_ssp.get(ssp, 0),
                ti.before_start.get(ssp, 0),
                tuple(r for r in ti.resets if r.ssp == ssp),
            )
            for ssp in sorted(ti.ssps)
        ),
        peak,
        oldest,
    )
