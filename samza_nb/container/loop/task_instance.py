"""One task instance: the user's task object for a task name, with the run loop's per-task state."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.api.task import PartitionEndListenerTask
from samza_nb.api.task_factory import TaskKind, task_kind
from samza_nb.container.loop.callbacks import TaskCallbackManager
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.container.loop.coroutines import Suspended, run_in_line
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.metadata import OffsetReset
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.api.task import MessageCollector
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.hosts import InLineHost


class TaskInstance:
    """A task name's task object and the state the run loop keeps for it.

    The state changes only through the transition methods below, which keep :attr:`open` (may a new
    message start now?) and :attr:`runs_inline` (may the next messages run on the inline run path?)
    current. Operations of one task never overlap: commit > window > end-of-stream > messages.
    """

    def __init__(
        self,
        name: str,
        task: Any,
        ssps: frozenset[SystemStreamPartition],
        collector: MessageCollector,
        starting_offsets: Mapping[SystemStreamPartition, str],
        comparators: Mapping[SystemStreamPartition, Callable[[str, str], int]],
        last_processed: Mapping[SystemStreamPartition, str],
        max_concurrency: int,
        window_enabled: bool,
        inline: bool = True,
        async_commit: bool = False,
        before_start: Mapping[SystemStreamPartition, int] | None = None,
    ) -> None:
        self.name = name
        self.task = task
        self.ssps = ssps
        self.collector = collector
        self.kind = task_kind(task)
        self._inline_allowed = inline  # no thread pool: sync tasks run on the loop's thread (see inline)
        self._window_enabled = window_enabled
        # Inline tasks with concurrency 1 take runs of messages in a tight loop (process_run); so do
        # coroutine tasks while nothing of theirs is outstanding, each coroutine in line until one
        # suspends (loop/coroutines.py), which ends the run.
        self._run_capable = (self.inline and max_concurrency == 1) or self.coroutine
        self.suspended: Suspended | None = None  # the coroutine a run ended on, to start as a Task
        # Whether a coroutine of the task suspended: from then on each message starts as a Task of its
        # own from its start (what asyncio costs; code that binds the current task before its first
        # await binds the message's Task), never in line first.
        self.suspending = False
        self.host: InLineHost | None = None  # the current task of its in-line runs (loop/hosts.py)
        self.process: Callable[..., Any] = getattr(task, "process", None) or task.process_async
        self.max_concurrency = max_concurrency
        self.async_commit = async_commit
        self.windowable = window_enabled and callable(getattr(task, "window", None))
        # Told of each partition's end-of-stream (on_partition_end) once nothing of it is in flight.
        self.partition_end_listener = isinstance(task, PartitionEndListenerTask)
        self.starting_offsets = dict(starting_offsets)
        self.comparators = comparators
        # SSPs whose messages may still be older than the starting offset (checked until one is not).
        self.check_start: set[SystemStreamPartition] = set(ssps)
        # Low watermark: the last released offset per SSP; starts at the checkpoint.
        self._last_offsets: dict[SystemStreamPartition, str] = dict(last_processed)
        self._committed_offsets: dict[SystemStreamPartition, str] = dict(last_processed)
        self.callbacks = TaskCallbackManager()
        self.coordinator = ReadableCoordinator(name)  # reused by inline sync calls
        self.pending: deque[IncomingMessageEnvelope] = deque()
        self.open_ssps: set[SystemStreamPartition] = set(ssps)
        self.in_flight = 0
        self.peak_in_flight = 0
        # Callbacks started and not released yet, oldest first: the first holds the low watermark back.
        self.unreleased: deque[TaskCallbackImpl] = deque()
        # Messages processed, in all and per partition (counted per run, round or message; never per
        # message inline): only this class's methods write them.
        self._processed = 0
        self._processed_by_ssp: dict[SystemStreamPartition, int] = dict.fromkeys(ssps, 0)
        # Messages of each partition before its starting offset that the job will not read (given by the
        # container for partitions started at their offset default, integer offsets only).
        self.before_start: dict[SystemStreamPartition, int] = dict(before_start or {})
        # Partitions its consumer moved because their position did not exist (offsets_reset), oldest first.
        self.resets: list[OffsetReset] = []
        self.need_window = False
        self.need_commit = False
        self.window_in_flight = False
        self.commit_in_flight = False
        self.end_of_stream = not ssps
        self.eos_ran = False
        self.done = False
        self.open = True
        self.runs_inline = self._run_capable

    @property
    def inline(self) -> bool:
        """Whether a message completes when ``process()`` returns, on the loop's thread: a sync task
        without a thread pool."""
        return self.kind is TaskKind.SYNC and self._inline_allowed

    @property
    def coroutine(self) -> bool:
        """Whether the task's ``process`` is an ``async def``."""
        return self.kind is TaskKind.COROUTINE

    # -- counters (read here; written only by the methods below) -------------------------------------------
    @property
    def processed(self) -> int:
        """Messages started (general path) or processed (inline) so far."""
        return self._processed

    @property
    def processed_by_ssp(self) -> Mapping[SystemStreamPartition, int]:
        """:attr:`processed` per partition."""
        return self._processed_by_ssp

    @property
    def last_offsets(self) -> Mapping[SystemStreamPartition, str]:
        """The low watermark: per partition the offset of its last released message (from the checkpoint
        until one is)."""
        return self._last_offsets

    @property
    def committed_offsets(self) -> Mapping[SystemStreamPartition, str]:
        """The offsets of the task's last commit (from the checkpoint until one is)."""
        return self._committed_offsets

    def record_run(self, ssp: SystemStreamPartition, count: int, last_offset: str | None = None) -> None:
        """``count`` messages of ``ssp`` were processed inline, the last at ``last_offset`` when given (the
        inline paths call this once per run, round or message, never per message of a run)."""
        if last_offset is not None:
            self._last_offsets[ssp] = last_offset
        self._processed += count
        self._processed_by_ssp[ssp] += count

    def release(self, released: Iterable[TaskCallbackImpl]) -> None:
        """``released`` (callbacks of the general path, in sequence order) were released: each moves its
        partition's low watermark (an end-of-stream does not) and leaves :attr:`unreleased`."""
        unreleased = self.unreleased
        last_offsets = self._last_offsets
        for callback in released:
            if unreleased and unreleased[0] is callback:
                unreleased.popleft()
            if callback.offset != END_OF_STREAM_OFFSET:
                last_offsets[callback.ssp] = callback.offset
        if self.coroutine and not unreleased:
            self._refresh()  # nothing outstanding: runs in line again

    def uncommitted_offsets(self) -> dict[SystemStreamPartition, str] | None:
        """The offsets a final commit at stop writes (the low watermark), or None when the task is done or
        its low watermark is what it committed last."""
        if self.done or self._last_offsets == self._committed_offsets:
            return None
        return dict(self._last_offsets)

    def committed_at_stop(self, offsets: dict[SystemStreamPartition, str]) -> None:
        """The final commit at stop wrote ``offsets`` (from :meth:`uncommitted_offsets`)."""
        self._committed_offsets = offsets

    def offsets_reset(self, reset: OffsetReset) -> None:
        """The consumer moved ``reset.ssp`` to ``reset.to_offset`` (its position did not exist): its
        messages from there are processed (not skipped as older than the old start), and until one is,
        ``reset.last`` (the offset before) is its low watermark, so the next checkpoint is written from the
        new position, never the stale one."""
        self.starting_offsets[reset.ssp] = reset.to_offset
        self._last_offsets[reset.ssp] = reset.last
        self.resets.append(reset)

    # -- readiness -----------------------------------------------------------------------------------------
    def _refresh(self) -> None:
        self.open = open_ = (
            self.in_flight < self.max_concurrency
            and not self.need_window
            and not self.need_commit
            and not self.window_in_flight
            and (self.async_commit or not self.commit_in_flight)
            and not self.eos_ran
            and not self.done
        )
        self.runs_inline = (
            open_
            and self._run_capable
            and not self.pending
            and not (self.coroutine and (self.in_flight or self.unreleased or self.suspending))
        )

    # -- transitions ---------------------------------------------------------------------------------------
    def request_commit(self) -> None:
        """A commit is due (timer, request or end-of-stream); ignored once the task is done."""
        if not self.done:
            self.need_commit = True
            self._refresh()

    def request_window(self) -> None:
        """A window is due; ignored once the task is done."""
        if not self.done:
            self.need_window = True
            self._refresh()

    def start_commit(self) -> dict[SystemStreamPartition, str]:
        """The commit starts; returns the offsets it writes (the low watermark now)."""
        self.need_commit = False
        self.commit_in_flight = True
        self._refresh()
        return dict(self._last_offsets)

    def commit_finished(self, offsets: dict[SystemStreamPartition, str] | None) -> bool:
        """The commit ended (``offsets`` written, or None when it failed or was cancelled); returns True
        when that commit was the task's last (after end-of-stream): the task is done."""
        self.commit_in_flight = False
        finished = False
        if offsets is not None:
            self._committed_offsets = offsets
            if self.end_of_stream and self.eos_ran:
                self.done = finished = True
                # a timer that fired during this final commit asks for nothing more: the task is done
                self.need_commit = self.need_window = False
        self._refresh()
        return finished

    def start_window(self) -> None:
        """The window call starts."""
        self.need_window = False
        self.window_in_flight = True
        self._refresh()

    def window_finished(self) -> None:
        """The window call returned."""
        self.window_in_flight = False
        self._refresh()

    def start_end_of_stream(self) -> None:
        """``on_end_of_stream`` runs now; the final commit follows it."""
        self.eos_ran = True
        self.need_commit = True
        self._refresh()

    def partition_ended(self, ssp: SystemStreamPartition) -> None:
        """``ssp``'s end-of-stream was taken; the task's end-of-stream is due once all its SSPs ended."""
        self.open_ssps.discard(ssp)
        if not self.open_ssps:
            self.end_of_stream = True

    def message_started(self, callback: TaskCallbackImpl) -> None:
        """A message of the general path started (it completes through ``callback``)."""
        in_flight = self.in_flight = self.in_flight + 1
        if in_flight > self.peak_in_flight:
            self.peak_in_flight = in_flight
        self._processed += 1
        self._processed_by_ssp[callback.ssp] += 1
        self.unreleased.append(callback)
        self._refresh()

    def message_completed(self) -> None:
        """A message of the general path completed."""
        self.in_flight -= 1
        self._refresh()

    def park(self, envelope: IncomingMessageEnvelope, *, first: bool = False) -> None:
        """Keep ``envelope`` until the task is free (its partition is not refilled meanwhile); ``first``
        puts it before the others."""
        if first:
            self.pending.appendleft(envelope)
        else:
            self.pending.append(envelope)
        self.runs_inline = False

    def unpark(self) -> IncomingMessageEnvelope:
        """The oldest parked envelope, now to start."""
        envelope = self.pending.popleft()
        if not self.pending:
            self._refresh()
        return envelope

    # -- messages -------------------------------------------------------------------------------------------
    def skips(self, envelope: IncomingMessageEnvelope) -> bool:
        """True when ``envelope`` is older than its partition's starting offset (it is skipped). Once a
        partition had one message that is not, its later ones are not checked again."""
        ssp = envelope.ssp
        if ssp not in self.check_start:
            return False
        start = self.starting_offsets.get(ssp)
        if start is not None and self.comparators[ssp](envelope.offset, start) < 0:
            return True
        self.check_start.discard(ssp)
        return False

    def process_run(
        self, first: IncomingMessageEnvelope, rest: Iterable[IncomingMessageEnvelope]
    ) -> tuple[IncomingMessageEnvelope, Exception] | None:
        """Process ``first`` then ``rest`` (all of one SSP, in order) with the sync task, inline; stop after
        a call that made a coordinator request (the caller applies it). The SSP's low watermark moves to
        the last processed message. Returns None, or the message whose call raised and the error."""
        if self.coroutine:
            return self._coroutine_run(first, rest)
        process, collector, coordinator = self.process, self.collector, self.coordinator
        envelope = last = first
        try:
            process(envelope, collector, coordinator)
            if not coordinator.requested:
                for envelope in rest:
                    process(envelope, collector, coordinator)
                    last = envelope
                    if coordinator.requested:
                        break
        except Exception as exc:
            if envelope is not first:
                self._last_offsets[last.ssp] = last.offset
            return envelope, exc
        self._last_offsets[last.ssp] = last.offset
        return None

    def _coroutine_run(
        self, first: IncomingMessageEnvelope, rest: Iterable[IncomingMessageEnvelope]
    ) -> tuple[IncomingMessageEnvelope, Exception] | None:
        """:meth:`process_run` of a coroutine task (:func:`run_in_line`): a coroutine that suspended is
        kept in :attr:`suspended` (the caller starts it as a Task) with the coordinator it was given; the
        low watermark moves to the last message completed."""
        assert self.host is not None  # given by the caller (starts.host_for)
        last, failed, suspended = run_in_line(
            self.process, self.collector, self.coordinator, first, rest, self.host
        )
        if suspended is not None:
            self.suspended = suspended
            self.coordinator = ReadableCoordinator(self.name)  # the suspended call keeps the one it has
        if last is not None:
            self._last_offsets[last.ssp] = last.offset
        return failed

    # -- live changes (pause/step/set/swap: samza_nb/container/steering/) -------------------------------
    def set_concurrency(self, max_concurrency: int) -> None:
        """``task.max.concurrency`` changed live: with 1 a sync task on the loop thread takes the inline
        run path again, above 1 the general path."""
        self.max_concurrency = max_concurrency
        self._run_capable = (self.inline and max_concurrency == 1) or self.coroutine
        self._refresh()

    def set_window_enabled(self, enabled: bool) -> None:
        """``task.window.ms`` changed live between off (<= 0) and on."""
        self._window_enabled = enabled
        self.windowable = enabled and callable(getattr(self.task, "window", None))
        if not self.windowable:
            self.need_window = False
        self._refresh()

    def use_collector(self, collector: MessageCollector) -> None:
        """The task sends with ``collector`` from its next call on (a step's recording one, then back)."""
        self.collector = collector

    def install(self, task: Any, collector: MessageCollector) -> None:
        """Run ``task`` (initialised already) from the next message on, sending with ``collector``; the
        task's state (offsets, counters, callbacks, parked messages) stays. Only while nothing of the task
        is in flight."""
        if self.in_flight or self.window_in_flight:
            raise SamzaError(f"task {self.name!r}: a task instance is replaced only while it is idle")
        self.task = task
        self.collector = collector
        self.kind = task_kind(task)
        self.suspending = False  # the new task's coroutines are tried in line again
        self._run_capable = (self.inline and self.max_concurrency == 1) or self.coroutine
        self.process = getattr(task, "process", None) or task.process_async
        self.windowable = self._window_enabled and callable(getattr(task, "window", None))
        self.partition_end_listener = isinstance(task, PartitionEndListenerTask)
        self._refresh()

    # -- lifecycle hooks -----------------------------------------------------------------------------------
    def init(self, context: Any) -> None:
        """Call the task's ``init(context)`` if it has one; its ``process`` is taken again after it (a task
        may bind its process at init, as the operator task does)."""
        init = getattr(self.task, "init", None)
        if callable(init):
            init(context)
            self.process = getattr(self.task, "process", None) or self.task.process_async

    def close(self) -> None:
        """Call the task's ``close()`` if it has one."""
        close = getattr(self.task, "close", None)
        if callable(close):
            close()

    @property
    def has_end_of_stream_listener(self) -> bool:
        """True when the task implements ``on_end_of_stream``."""
        return callable(getattr(self.task, "on_end_of_stream", None))

    def __repr__(self) -> str:
        return f"TaskInstance({self.name!r}, kind={self.kind.value}, in_flight={self.in_flight})"
