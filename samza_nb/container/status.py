"""A point-in-time view of a running container, for dashboards, magics and the CLI (cheap to take)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.container.task_instance import TaskInstance


@dataclass(frozen=True, slots=True)
class PartitionStatus:
    """One input partition of a task: last processed (released) and last committed offsets, and whether
    its end-of-stream was reached."""

    ssp: SystemStreamPartition
    processed_offset: str | None
    committed_offset: str | None
    ended: bool


@dataclass(frozen=True, slots=True)
class TaskStatus:
    """One task: messages in flight against its limit, processed count, pending operations, partitions."""

    name: str
    in_flight: int
    max_concurrency: int
    processed: int
    need_commit: bool
    need_window: bool
    end_of_stream: bool
    done: bool
    partitions: tuple[PartitionStatus, ...]


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """The container's lifecycle state, total processed messages and its tasks."""

    state: str
    processed: int
    tasks: tuple[TaskStatus, ...]


def task_status(ti: TaskInstance) -> TaskStatus:
    """The status of one task instance."""
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
            )
            for ssp in sorted(ti.ssps)
        ),
    )
