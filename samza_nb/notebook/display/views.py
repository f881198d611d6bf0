"""What the notebook shows of a job: frozen snapshots (JobView and its parts) and the small helpers that
phrase them (plurals, lag, the rate).

A :class:`JobView` is built on the job's loop thread a few times a second and read from any thread; the
text status, the reports and the dashboard all render the same rows (:mod:`.view_rows`), so they always
agree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.notebook.display.event_time.views import TimeView
    from samza_nb.observe.states import ContainerState, RunOutcome


@dataclass(frozen=True, slots=True)
class PartitionView:
    """One input partition: its last processed (released) offset, last committed offset, the partition's
    newest offset (head), the lag between the head and the position (see :func:`position`), and whether
    it reached end-of-stream; ``processed`` counts its messages processed, ``starting_offset`` is where
    it started and ``before_start`` the messages before that start the job does not read (an
    ``upcoming`` start over a backlog); ``resets`` one line per move of its consumer to another offset
    because its position did not exist (a checkpoint past the end of a recreated log)."""

    ssp: SystemStreamPartition
    processed_offset: str | None
    committed: str | None
    head: str | None
    lag: int | None
    ended: bool
    processed: int = 0
    starting_offset: str | None = None
    before_start: int = 0
    resets: tuple[str, ...] = ()


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
    """The event-time watermark a task's input stream reached (ms; the high-level API's operators): the
    lowest of the task's partitions of that stream (:attr:`JobView.watermarks`)."""

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

    ``state`` is the container's lifecycle state (a ContainerState) while it runs, then the run's
    outcome (a RunOutcome): ``finished`` (every input reached end-of-stream, or the tasks asked to stop),
    ``stopped`` (``%samza_stop``), ``timed out``, ``interrupted``, ``cancelled`` or ``failed`` (``error``
    says why). ``rate`` is the recent throughput in messages per
    second (about the last second), :attr:`average_rate` the average over the run. ``notes`` are one-line
    remarks on the job (messages left unread before an ``upcoming`` start). ``decisions`` and ``commits`` are
    newest first. ``containers`` lists the container processes of a job of several containers (empty for a job
    in the kernel's process); its ``tasks`` are then every container's tasks. ``end_of_stream`` shows the
    end-of-stream bookkeeping of the high-level API's intermediate partitions (empty otherwise);
    ``messages`` a live sample of messages in and out of the tasks (newest first), ``stores`` each store's
    contents at its latest commit; ``time`` the event time of a job that runs an application in the kernel
    (watermarks, late messages, open windows; None otherwise).
    """

    job: str
    mode: str
    state: ContainerState | RunOutcome
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
    end_of_stream: tuple[EndOfStreamView, ...] = ()
    messages: tuple[MessageView, ...] = ()
    stores: tuple[StoreTableView, ...] = ()
    time: TimeView | None = None

    @property
    def average_rate(self) -> float:
        """Messages per second over the whole run so far."""
        return self.processed / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def watermarks(self) -> tuple[WatermarkView, ...]:
        """Each task's watermark of each input stream that has one, by task and stream: the lowest of the
        task's partitions of it in :attr:`time` (the stream watermark its input operator goes by; the event
        time section shows them); empty without an event time view."""
        if self.time is None:
            return ()
        lowest: dict[tuple[str, SystemStream], int] = {}
        for p in self.time.partitions:
            key = (p.task, p.ssp.system_stream)
            lowest[key] = min(lowest.get(key, p.watermark), p.watermark)
        return tuple(
            WatermarkView(task, stream, mark) for (task, stream), mark in sorted(lowest.items()) if mark >= 0
        )

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


def offset_lag(head: str | None, processed: str | None, ended: bool, *, resumed: bool = False) -> int | None:
    """Messages between the position (see :func:`position`) and the head, for integer offsets (in-memory,
    Kafka); 0 once the partition ended. ``resumed``: nothing of the partition was processed since the
    start, so the position is its checkpoint's: one past the head is not "caught up" (a head sampled
    before the last messages) but a checkpoint beyond the end of a recreated log, and the lag is unknown
    (None) until its consumer resets it."""
    if ended:
        return 0
    if head is None or processed is None:
        return None
    try:
        lag = int(head) - int(processed)
    except ValueError:
        return None
    if lag < 0 and resumed:
        return None
    return max(lag, 0)


def past_head(p: PartitionView) -> bool:
    """True when ``p``'s position (its checkpoint: nothing processed yet) is beyond its head."""
    if p.ended or p.processed or p.head is None:
        return False
    at = position(p.processed_offset, p.starting_offset)
    try:
        return at is not None and int(at) > int(p.head)
    except ValueError:
        return False


def reset_notes(partitions: tuple[PartitionView, ...]) -> tuple[str, ...]:
    """One line per offset reset of ``partitions`` (stream, partition, from, to, why, the policy), and per
    partition whose checkpoint is beyond its head and not reset yet."""
    notes = [f"offset reset: {line}" for p in partitions for line in p.resets]
    notes.extend(
        f"{p.ssp}: checkpoint {position(p.processed_offset, p.starting_offset)} is past the head {p.head} "
        "(the log was recreated or truncated?): lag unknown until its consumer resets it"
        for p in partitions
        if past_head(p)
    )
    return tuple(notes)


def before_start_notes(
    partitions: tuple[PartitionView, ...], offset_key: Callable[[SystemStream], str] | None = None
) -> tuple[str, ...]:
    """Per input stream with partitions that started past older messages (an ``upcoming`` start over a
    backlog), how many it leaves unread and the key that reads them: ``offset_key(stream)`` (the key in
    force for the stream; default the system's ``systems.<s>.samza.offset.default``)."""
    if offset_key is None:
        offset_key = _system_offset_key
    skipped: dict[SystemStream, int] = {}
    for p in partitions:
        if p.before_start > 0:
            stream = p.ssp.system_stream
            skipped[stream] = skipped.get(stream, 0) + p.before_start
    return tuple(
        f"{plural(count, 'message')} before the start of {stream.system}.{stream.stream}: set "
        f"{offset_key(stream)} = oldest to read them"
        for stream, count in skipped.items()
    )


def _system_offset_key(stream: SystemStream) -> str:
    return f"systems.{stream.system}.samza.offset.default"


def rate_text(view: JobView) -> str:
    """``4,100 msg/s now · avg 3,900 msg/s`` while the job runs, ``avg 3,900 msg/s`` once it is done."""
    average = f"avg {view.average_rate:,.0f} msg/s"
    return average if view.done else f"{view.rate:,.0f} msg/s now · {average}"


__all__ = [
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
    "offset_lag",
    "past_head",
    "plural",
    "position",
    "rate_text",
    "reset_notes",
]
