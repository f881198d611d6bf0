"""The events the container publishes on the observe bus. Frozen values; cheap to keep for a dashboard."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from samza_nb.api.streams import SystemStream, SystemStreamPartition


class DecisionTrace(Protocol):
    """Why a chooser chose a message (the chooser layers' ChoiceTrace has these fields)."""

    @property
    def tier(self) -> int | None:
        """The priority tier of the chosen message (None without priorities)."""
        ...

    @property
    def candidates(self) -> tuple[tuple[SystemStreamPartition, int | None], ...]:
        """The messages that were waiting, with their tiers."""
        ...

    @property
    def gated_by_bootstrap(self) -> bool:
        """True when bootstrapping held other streams back."""
        ...

    @property
    def held_by_batching(self) -> bool:
        """True when the message continues a batch of its partition."""
        ...

    @property
    def lagging_streams(self) -> tuple[SystemStream, ...]:
        """The bootstrap streams not caught up yet."""
        ...

    @property
    def batch_position(self) -> int | None:
        """Which envelope of its batch the chosen one is (1-based; None without a batching layer)."""
        ...

    @property
    def batch_size(self) -> int | None:
        """The most envelopes of one partition in a batch (None without a batching layer)."""
        ...


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
    trace: DecisionTrace | None = None


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
class MessageTaken(Event):
    """A sample of the messages coming into a task: ``task`` took the message at ``ssp``/``offset`` with
    this ``key`` and ``message`` (the envelope's own objects, not copies) and event time ``timestamp``
    (ms; None without one). Published only as a sample (see :data:`samza_nb.observe.bus.SAMPLED_EVENTS`)."""

    task: str
    ssp: SystemStreamPartition
    offset: str
    key: Any
    message: Any
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class MessageSent(Event):
    """A sample of the messages going out of a task: ``task`` sent ``message`` with ``key`` to
    ``system_stream`` (the envelope's own objects). Published only as a sample."""

    task: str
    system_stream: SystemStream
    key: Any
    message: Any


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


@dataclass(frozen=True, slots=True)
class WatermarkAdvanced(Event):
    """The watermark of ``task``'s input ``system_stream`` advanced to ``watermark`` (ms of event time);
    ``ssp`` is the partition whose control message moved it (None when restored bookkeeping did, at the
    task's first call after a restart)."""

    task: str
    system_stream: SystemStream
    ssp: SystemStreamPartition | None
    watermark: int


@dataclass(frozen=True, slots=True)
class EndOfStreamProgress(Event):
    """``task`` took an end-of-stream control message on ``ssp`` (an intermediate partition):
    ``producers_seen`` of ``producers_expected`` upstream tasks have ended; ``ended`` once the partition
    has (every producer, or a final message from the aggregating task)."""

    task: str
    ssp: SystemStreamPartition
    producers_seen: tuple[str, ...]
    producers_expected: int
    ended: bool
