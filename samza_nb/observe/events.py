"""The events the container publishes on the observe bus. Frozen values; cheap to keep for a dashboard."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from samza_nb.api.streams import SystemStreamPartition


@dataclass(frozen=True, slots=True)
class Event:
    """Base of every observe event; ``at_ms`` is the container clock's time when it happened."""

    at_ms: float


@dataclass(frozen=True, slots=True)
class ContainerStarted(Event):
    """The container started; ``tasks`` maps task names to their input partitions."""

    tasks: Mapping[str, tuple[SystemStreamPartition, ...]]
    max_concurrency: int


@dataclass(frozen=True, slots=True)
class ContainerStopped(Event):
    """The container stopped; ``error`` is the failure that stopped it, if any."""

    processed: int
    error: str | None = None


@dataclass(frozen=True, slots=True)
class ChooserDecision(Event):
    """The chooser picked the message at ``ssp``/``offset``; ``trace`` holds its reasons when traced."""

    ssp: SystemStreamPartition
    offset: str
    trace: Any = None


@dataclass(frozen=True, slots=True)
class ProcessStarted(Event):
    """A task started processing a message; ``in_flight`` counts its messages in flight now."""

    task: str
    ssp: SystemStreamPartition
    offset: str
    in_flight: int


@dataclass(frozen=True, slots=True)
class ProcessCompleted(Event):
    """A task's message completed (it may still wait for earlier ones before its offset is released)."""

    task: str
    ssp: SystemStreamPartition
    offset: str
    in_flight: int


@dataclass(frozen=True, slots=True)
class WindowFired(Event):
    """A task's window() ran."""

    task: str


@dataclass(frozen=True, slots=True)
class Committed(Event):
    """A task's checkpoint was written with ``offsets`` (the last released offset per partition)."""

    task: str
    offsets: Mapping[SystemStreamPartition, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class EndOfStreamReached(Event):
    """``ssp`` of ``task`` reached end-of-stream; ``task_done`` when it was the task's last open partition."""

    task: str
    ssp: SystemStreamPartition | None
    task_done: bool


@dataclass(frozen=True, slots=True)
class TaskFailed(Event):
    """A task failed; the container stops."""

    task: str
    ssp: SystemStreamPartition | None
    offset: str | None
    error: str


@dataclass(frozen=True, slots=True)
class StoreRestoreProgress(Event):
    """A task's store is being restored from its changelog: ``restored`` records applied of about
    ``total``; ``done`` on the last report."""

    task: str
    store: str
    restored: int
    total: int
    done: bool
