"""What the notebook shows of a job: frozen snapshots (JobView) and their rows as plain strings.

A :class:`JobView` is built on the job's loop thread a few times a second and read from any thread; the
text status, the reports and the dashboard all render the same rows, so they always agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStream, SystemStreamPartition


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One input partition: last processed (released) offset, last committed offset, the partition's
    newest offset (head) and the lag between head and processed; whether it reached end-of-stream."""

    ssp: SystemStreamPartition
    processed: str | None
    committed: str | None
    head: str | None
    lag: int | None
    ended: bool


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task: callbacks in flight against ``task.max.concurrency``, messages processed, its phase."""

    name: str
    in_flight: int
    max_concurrency: int
    processed: int
    phase: str
    partitions: tuple[PartitionView, ...]


@dataclass(frozen=True, slots=True)
class DecisionView:
    """A chooser decision (sampled: about one per slice of work) and why it was made."""

    at_s: float
    ssp: SystemStreamPartition
    offset: str
    tier: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class CommitView:
    """A checkpoint written for a task, with the offsets it holds."""

    at_s: float
    task: str
    offsets: tuple[tuple[SystemStreamPartition, str], ...]


@dataclass(frozen=True, slots=True)
class ContainerView:
    """One container process of a job of several (``job.container.count`` > 1), as it last reported to
    the job coordinator: its state (``unreported`` before its first report), host and pid, messages
    processed, and the names of its tasks (from the job model, so they show before the first report)."""

    container_id: str
    state: str
    host: str | None
    pid: int | None
    processed: int
    tasks: tuple[str, ...]
    error: str | None = None


@dataclass(frozen=True, slots=True)
class WatermarkView:
    """The event-time watermark a task's input stream reached (ms; the high-level API's operators)."""

    task: str
    system_stream: SystemStream
    watermark: int


@dataclass(frozen=True, slots=True)
class EndOfStreamView:
    """End-of-stream of one intermediate partition as one consuming task counts it: which upstream tasks
    have ended it, out of how many; ``ended`` once every one has (or the aggregating task said so)."""

    task: str
    ssp: SystemStreamPartition
    producers_seen: tuple[str, ...]
    producers_expected: int
    ended: bool


@dataclass(frozen=True, slots=True)
class MessageView:
    """A sampled message flowing into (``direction`` ``in``) or out of (``out``) a task: seconds since the
    job started, the task, where (``ssp@offset`` coming in, ``system.stream`` going out), and its key and
    value as short text."""

    at_s: float
    task: str
    direction: str
    where: str
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class StoreTableView:
    """A store's contents as its tasks last committed them (``at_s`` seconds after the start): the
    column names, the first rows as text, and how many rows the store holds in all."""

    store: str
    at_s: float
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    total: int


@dataclass(frozen=True, slots=True)
class JobView:
    """A snapshot of a notebook job.

    ``state`` is the container's lifecycle state while it runs, then the run's outcome: ``finished``
    (every input reached end-of-stream, or the tasks asked to stop), ``stopped`` (``%samza_stop``),
    ``timed out``, ``interrupted`` or ``failed`` (``error`` says why). ``rate`` is the recent throughput
    in messages per second. ``decisions`` and ``commits`` are newest first. ``containers`` lists the
    container processes of a job of several containers (empty for a job in the kernel's process); its
    ``tasks`` are then every container's tasks. ``watermarks`` and ``end_of_stream`` show the high-level
    API's event time and the end-of-stream bookkeeping of intermediate partitions (empty otherwise);
    ``messages`` a live sample of messages in and out of the tasks (newest first), ``stores`` each store's
    contents at its latest commit.
    """

    job: str
    mode: str
    state: str
    processed: int = 0
    elapsed_s: float = 0.0
    rate: float = 0.0
    tasks: tuple[TaskView, ...] = ()
    decisions: tuple[DecisionView, ...] = ()
    commits: tuple[CommitView, ...] = ()
    commit_count: int = 0
    restores: tuple[str, ...] = ()
    error: str | None = None
    done: bool = False
    notes: tuple[str, ...] = field(default=())
    containers: tuple[ContainerView, ...] = ()
    watermarks: tuple[WatermarkView, ...] = ()
    end_of_stream: tuple[EndOfStreamView, ...] = ()
    messages: tuple[MessageView, ...] = ()
    stores: tuple[StoreTableView, ...] = ()

    @property
    def in_flight(self) -> int:
        """Callbacks in flight over all tasks."""
        return sum(task.in_flight for task in self.tasks)

    @property
    def partitions(self) -> tuple[PartitionView, ...]:
        """Every input partition of every task, in task order."""
        return tuple(p for task in self.tasks for p in task.partitions)


def offset_lag(head: str | None, processed: str | None, ended: bool) -> int | None:
    """Messages between the processed offset and the head, for integer offsets (in-memory, Kafka)."""
    if ended:
        return 0
    if head is None or processed is None:
        return None
    try:
        return max(int(head) - int(processed), 0)
    except ValueError:
        return None


# -- rows -----------------------------------------------------------------------------------------------
TASK_HEADERS = ("task", "in flight", "processed", "phase")
PARTITION_HEADERS = ("partition", "processed", "committed", "head", "lag", "end-of-stream")
DECISION_HEADERS = ("t (s)", "chosen", "tier", "why")
COMMIT_HEADERS = ("t (s)", "task", "offsets")
CONTAINER_HEADERS = ("container", "state", "host", "pid", "processed", "tasks")
WATERMARK_HEADERS = ("task", "input stream", "watermark (ms)")
END_OF_STREAM_HEADERS = ("task", "intermediate partition", "producers ended", "ended")


def _text(value: object) -> str:
    return "—" if value is None else str(value)


def header_line(view: JobView) -> str:
    """``job 'x' — running on the kernel's loop · 1,234 processed · 5,678 msg/s · 1.2 s``."""
    parts = [f"{view.processed:,} processed", f"{view.rate:,.0f} msg/s", f"{view.elapsed_s:.1f} s"]
    if view.in_flight:
        parts.insert(1, f"{view.in_flight} in flight")
    return f"job {view.job!r} — {view.state} ({view.mode}) · " + " · ".join(parts)


def task_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per task."""
    return [
        (task.name, f"{task.in_flight}/{task.max_concurrency}", f"{task.processed:,}", task.phase)
        for task in view.tasks
    ]


def partition_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per input partition."""
    return [
        (
            str(p.ssp),
            _text(p.processed),
            _text(p.committed),
            _text(p.head),
            _text(p.lag),
            "yes" if p.ended else "no",
        )
        for p in view.partitions
    ]


def container_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per container process (none for a job in the kernel's process)."""
    return [
        (
            c.container_id,
            c.state + (f": {c.error}" if c.error else ""),
            _text(c.host),
            _text(c.pid),
            f"{c.processed:,}",
            ", ".join(c.tasks),
        )
        for c in view.containers
    ]


def decision_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per recent chooser decision, newest first."""
    return [(f"{d.at_s:.3f}", f"{d.ssp}@{d.offset}", _text(d.tier), d.reason) for d in view.decisions]


def commit_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per recent checkpoint, newest first."""
    return [
        (f"{c.at_s:.3f}", c.task, ", ".join(f"{ssp}={offset}" for ssp, offset in c.offsets) or "(none)")
        for c in view.commits
    ]


def watermark_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per task and input stream with a watermark."""
    return [
        (w.task, f"{w.system_stream.system}.{w.system_stream.stream}", str(w.watermark))
        for w in view.watermarks
    ]


def end_of_stream_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per task and intermediate partition: producers that ended it (``1 of 2: Partition 0``), or
    that the task reading the aggregation partition said every producer had."""
    return [(e.task, str(e.ssp), _producers_ended(e), "yes" if e.ended else "no") for e in view.end_of_stream]


def _producers_ended(e: EndOfStreamView) -> str:
    if e.ended and len(e.producers_seen) < e.producers_expected:
        return f"all {e.producers_expected} (said the aggregating task)"
    seen = f": {', '.join(e.producers_seen)}" if e.producers_seen else ""
    return f"{len(e.producers_seen)} of {e.producers_expected}{seen}"


__all__ = [
    "COMMIT_HEADERS",
    "CONTAINER_HEADERS",
    "DECISION_HEADERS",
    "END_OF_STREAM_HEADERS",
    "PARTITION_HEADERS",
    "TASK_HEADERS",
    "WATERMARK_HEADERS",
    "CommitView",
    "ContainerView",
    "DecisionView",
    "EndOfStreamView",
    "JobView",
    "MessageView",
    "PartitionView",
    "StoreTableView",
    "TaskView",
    "WatermarkView",
    "commit_rows",
    "container_rows",
    "decision_rows",
    "end_of_stream_rows",
    "header_line",
    "offset_lag",
    "partition_rows",
    "task_rows",
    "watermark_rows",
]
