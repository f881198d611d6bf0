"""What the notebook shows of a job: frozen snapshots (JobView) and their rows as plain strings.

A :class:`JobView` is built on the job's loop thread a few times a second and read from any thread; the
text status, the reports and the dashboard all render the same rows, so they always agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import SystemStream, SystemStreamPartition


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One input partition: its last processed (released) offset, last committed offset, the partition's
    newest offset (head), the lag between the head and the position (see :func:`position`), and whether
    it reached end-of-stream; ``processed`` counts its messages processed, ``starting_offset`` is where
    it started and ``before_start`` the messages before that start the job does not read (an
    ``upcoming`` start over a backlog)."""

    ssp: SystemStreamPartition
    processed_offset: str | None
    committed: str | None
    head: str | None
    lag: int | None
    ended: bool
    processed: int = 0
    starting_offset: str | None = None
    before_start: int = 0


@dataclass(frozen=True, slots=True)
class InFlightView:
    """A task's oldest message not released yet (it holds the low watermark, so the next checkpoint,
    back): where it is and how long ago it started (ms)."""

    ssp: SystemStreamPartition
    offset: str
    age_ms: float


@dataclass(frozen=True, slots=True)
class TaskView:
    """One task: callbacks in flight against ``task.max.concurrency`` (and the most at once since the
    start, ``peak_in_flight``), messages processed, its phase (``stopped``/``failed`` once the job ended
    that way), its partitions and its oldest message in flight."""

    name: str
    in_flight: int
    max_concurrency: int
    processed: int
    phase: str
    partitions: tuple[PartitionView, ...]
    peak_in_flight: int = 0
    oldest_in_flight: InFlightView | None = None

    @property
    def checkpointed(self) -> str | None:
        """The committed offset of the partition of the oldest message in flight (None: none in flight
        or no checkpoint of it yet): the checkpoint that message holds back."""
        oldest = self.oldest_in_flight
        if oldest is None:
            return None
        return next((p.committed for p in self.partitions if p.ssp == oldest.ssp), None)


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
    """A checkpoint written for a task, with the offsets it holds; ``count`` identical ones in a row
    (same task, same offsets) make one view, ``at_s`` the latest's time."""

    at_s: float
    task: str
    offsets: tuple[tuple[SystemStreamPartition, str], ...]
    count: int = 1


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

    ``state`` is the container's lifecycle state while it runs, then the run's outcome: ``finished`` (every
    input reached end-of-stream, or the tasks asked to stop), ``stopped`` (``%samza_stop``), ``timed out``,
    ``interrupted`` or ``failed`` (``error`` says why). ``rate`` is the recent throughput in messages per
    second (about the last second), :attr:`average_rate` the average over the run. ``notes`` are one-line
    remarks on the job (messages left unread before an ``upcoming`` start). ``decisions`` and ``commits`` are
    newest first. ``containers`` lists the container processes of a job of several containers (empty for a job
    in the kernel's process); its ``tasks`` are then every container's tasks. ``watermarks`` and
    ``end_of_stream`` show the high-level API's event time and the end-of-stream bookkeeping of intermediate
    partitions (empty otherwise); ``messages`` a live sample of messages in and out of the tasks (newest
    first), ``stores`` each store's contents at its latest commit.
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
    def average_rate(self) -> float:
        """Messages per second over the whole run so far."""
        return self.processed / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def in_flight(self) -> int:
        """Callbacks in flight over all tasks."""
        return sum(task.in_flight for task in self.tasks)

    @property
    def partitions(self) -> tuple[PartitionView, ...]:
        """Every input partition of every task, in task order."""
        return tuple(p for task in self.tasks for p in task.partitions)


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 message``, ``2 messages``, ``1,234 messages``."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"


def position(processed_offset: str | None, starting_offset: str | None) -> str | None:
    """Where a partition is: its last processed offset, or before anything is processed the offset just
    before its start (``-1`` for a partition starting at offset 0); None for non-integer offsets."""
    if processed_offset is not None:
        return processed_offset
    if starting_offset is None:
        return None
    try:
        return str(int(starting_offset) - 1)
    except ValueError:
        return None


def offset_lag(head: str | None, processed: str | None, ended: bool) -> int | None:
    """Messages between the position (see :func:`position`) and the head, for integer offsets (in-memory,
    Kafka); 0 once the partition ended."""
    if ended:
        return 0
    if head is None or processed is None:
        return None
    try:
        return max(int(head) - int(processed), 0)
    except ValueError:
        return None


def before_start_notes(partitions: tuple[PartitionView, ...]) -> tuple[str, ...]:
    """Per input stream with partitions that started past older messages (an ``upcoming`` start over a
    backlog), how many it leaves unread and the key that reads them."""
    skipped: dict[SystemStream, int] = {}
    for p in partitions:
        if p.before_start > 0:
            stream = p.ssp.system_stream
            skipped[stream] = skipped.get(stream, 0) + p.before_start
    return tuple(
        f"{plural(count, 'message')} before the start of {stream.system}.{stream.stream}: set "
        f"systems.{stream.system}.samza.offset.default = oldest to read them"
        for stream, count in skipped.items()
    )


def rate_text(view: JobView) -> str:
    """``4,100 msg/s now · avg 3,900 msg/s`` while the job runs, ``avg 3,900 msg/s`` once it is done."""
    average = f"avg {view.average_rate:,.0f} msg/s"
    return average if view.done else f"{view.rate:,.0f} msg/s now · {average}"


# -- rows -----------------------------------------------------------------------------------------------
TASK_HEADERS = ("task", "in flight", "peak", "processed", "oldest in flight", "checkpointed", "phase")
PARTITION_HEADERS = ("partition", "processed", "last offset", "committed", "head", "lag", "end-of-stream")
DECISION_HEADERS = ("t (s)", "chosen", "tier", "why")
COMMIT_HEADERS = ("t (s)", "task", "offsets")
CONTAINER_HEADERS = ("container", "state", "host", "pid", "processed", "tasks")
WATERMARK_HEADERS = ("task", "input stream", "watermark (ms)")
END_OF_STREAM_HEADERS = ("task", "intermediate partition", "producers ended", "ended")


def _text(value: object) -> str:
    return "—" if value is None else str(value)


def header_line(view: JobView) -> str:
    """``job 'x' — running (on its own thread) · 1,234 processed · 2 in flight · 5,678 msg/s now · avg
    5,100 msg/s · 1.2 s`` (``avg`` only once the job is done)."""
    parts = [f"{view.processed:,} processed", rate_text(view), f"{view.elapsed_s:.1f} s"]
    if view.in_flight:
        parts.insert(1, f"{view.in_flight} in flight")
    return f"job {view.job!r} — {view.state} ({view.mode}) · " + " · ".join(parts)


def oldest_text(task: TaskView) -> str:
    """``in.clicks#3@120 (45 ms)``: the task's oldest message in flight, or ``—``."""
    oldest = task.oldest_in_flight
    if oldest is None:
        return "—"
    return f"{oldest.ssp}@{oldest.offset} ({oldest.age_ms:,.0f} ms)"


def task_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per task: in flight and the peak against ``task.max.concurrency``, processed count, the
    oldest message in flight and the checkpointed offset of its partition, phase."""
    return [
        (
            task.name,
            f"{task.in_flight}/{task.max_concurrency}",
            f"{task.peak_in_flight}/{task.max_concurrency}",
            f"{task.processed:,}",
            oldest_text(task),
            _text(task.checkpointed),
            task.phase,
        )
        for task in view.tasks
    ]


def _partition_row(p: PartitionView) -> tuple[str, ...]:
    return (
        str(p.ssp),
        f"{p.processed:,}",
        _text(p.processed_offset),
        _text(p.committed),
        _text(p.head),
        _text(p.lag),
        "yes" if p.ended else "no",
    )


def _total_row(stream: SystemStream, partitions: list[PartitionView]) -> tuple[str, ...]:
    lags = [p.lag for p in partitions]
    lag = "—" if any(value is None for value in lags) else f"{sum(value or 0 for value in lags):,}"
    ended = sum(p.ended for p in partitions)
    return (
        f"{stream.system}.{stream.stream} ({plural(len(partitions), 'partition')})",
        f"{sum(p.processed for p in partitions):,}",
        "",
        "",
        "",
        lag,
        "yes" if ended == len(partitions) else f"{ended} of {len(partitions)}",
    )


def partition_rows(view: JobView) -> list[tuple[str, ...]]:
    """Per input stream (in partition order), a row of its totals (processed, lag, partitions ended)
    when it has several partitions, then one row per partition."""
    streams: dict[SystemStream, list[PartitionView]] = {}
    for p in sorted(view.partitions, key=lambda p: p.ssp):
        streams.setdefault(p.ssp.system_stream, []).append(p)
    rows: list[tuple[str, ...]] = []
    for stream, partitions in streams.items():
        if len(partitions) > 1:
            rows.append(_total_row(stream, partitions))
        rows.extend(_partition_row(p) for p in partitions)
    return rows


def is_total_row(row: Sequence[str]) -> bool:
    """True for a stream's totals row of :func:`partition_rows`."""
    return row[0].endswith(" partitions)")


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


TIMES = "\u00d7"
"""The multiplication sign of a repeated checkpoint's count."""


def commit_rows(view: JobView) -> list[tuple[str, ...]]:
    """One row per recent checkpoint, newest first; identical ones in a row are one row (``task x3``,
    with a multiplication sign)."""
    return [
        (
            f"{c.at_s:.3f}",
            c.task + (f" {TIMES}{c.count}" if c.count > 1 else ""),
            ", ".join(f"{ssp}={offset}" for ssp, offset in c.offsets) or "(nothing processed yet)",
        )
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
    "InFlightView",
    "JobView",
    "MessageView",
    "PartitionView",
    "StoreTableView",
    "TaskView",
    "WatermarkView",
    "before_start_notes",
    "commit_rows",
    "container_rows",
    "decision_rows",
    "end_of_stream_rows",
    "header_line",
    "is_total_row",
    "offset_lag",
    "oldest_text",
    "partition_rows",
    "plural",
    "position",
    "rate_text",
    "task_rows",
    "watermark_rows",
]
