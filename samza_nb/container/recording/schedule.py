"""Record and replay of a run's schedule: the hooks the run loop and the container call, and the recorder.

A :class:`Schedule` that attaches becomes the run loop's schedule (:meth:`RunLoop.use_schedule`; the
loop's default, :data:`~samza_nb.container.loop.hooks.NO_SCHEDULE`, does nothing). It is a
:class:`~samza_nb.container.loop.hooks.LoopSchedule`: the loop's message paths call it where messages
start, without putting the loop on a slower path: a message started on the general path
(:meth:`Schedule.dispatched`, by ``MessagePump.dispatch`` just before the task sees it), a run of a sync
task's messages (:meth:`Schedule.ran`, once per run, after it) and a round of sync tasks
(:meth:`Schedule.ran_round`, once per round); and where the loop takes an async completion
(:meth:`Schedule.taken`, in the order it takes them; a replay may hold it), and each batch as it is
buffered (:meth:`Schedule.polled`: a recording's digests; a replay's check of them). Partition ends, windows
(``WindowFired``: a window is recorded where it ran, not where its timer fired) and commits it sees on the
observe bus (events that are not per message). The loop itself calls :meth:`Schedule.tick` once per
iteration, :meth:`Schedule.commit_timer_fired` when the commit timer fires and :meth:`Schedule.loop_ended`
when it stops. The coroutine of an ``async def process`` runs wrapped by :func:`stepped`
(:meth:`Schedule.coroutine`), which asks :meth:`Schedule.step` before each step of the coroutine (its
first run and every resumption).

:class:`ScheduleRecorder` writes all that down (:mod:`samza_nb.container.recording.recording_writer`: a
run or a round is one record, and records are written out at commits, at stop and when 64 KiB wait);
:class:`~samza_nb.container.recording.replay.ScheduleReplayer` forces it on a second run, through its
chooser (one message, or the rest of a recorded run, at a time) and by holding completions until their
records.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Coroutine, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb.container.recording.recording import ENDED, SCHEDULE_KEYS, STOPPED, Header, PartitionEntry
from samza_nb.container.recording.recording_writer import ScheduleWriter
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    import asyncio

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.config import Config
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.hooks import Failed, Outcome
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.run_loop import RunLoop
    from samza_nb.container.loop.task_instance import TaskInstance

_OBSERVED = (ev.EndOfStreamReached, ev.WindowFired, ev.Committed)
"""The events a schedule observes on the bus (none is per message: the loop keeps its fast paths)."""


class Schedule:
    """What record and replay share: the tables (task and partition indexes of the recording's header),
    the observation of the loop, and the hooks the loop and the container call. Itself it does nothing:
    the schedule of a run neither recorded nor replayed (it never attaches to the loop)."""

    clock_timers = True
    """False while replaying: window and commit fire at their recorded positions, not by the clock."""

    stepwise = True
    """Each step of an ``async def process`` is asked for (:meth:`step`) once the schedule attached."""

    def __init__(self) -> None:
        self.state: LoopState | None = None
        self.task_index: dict[str, int] = {}
        self.ssp_index: dict[SystemStreamPartition, int] = {}
        self.tasks: list[TaskInstance] = []
        self.started = [0]  # per task, messages started (of an async task: the next callback number)
        self._seq_of: dict[TaskCallbackImpl, int] = {}  # an async callback's message number
        self._unsubscribe: Callable[[], None] | None = None

    # -- the container's hooks --------------------------------------------------------------------------
    def job_config(self, config: Config) -> Config:
        """The config the job runs with (a replay: with the recorded values of the schedule's keys)."""
        return config

    def starting_point(
        self,
        task: str,
        starting: dict[SystemStreamPartition, str],
        last: dict[SystemStreamPartition, str],
        has_stores: bool,
    ) -> tuple[dict[SystemStreamPartition, str], dict[SystemStreamPartition, str]]:
        """Where ``task`` starts (starting offsets, checkpointed offsets) given the checkpoint's values."""
        return starting, last

    def chooser(self, chooser: MessageChooser) -> MessageChooser:
        """The chooser the job runs with."""
        return chooser

    def attach(self, loop: RunLoop) -> None:
        """Start on ``loop`` (before it runs); here nothing (the loop keeps its schedule that does
        nothing)."""

    def observe(self, loop: RunLoop, header: Header) -> None:
        """Observe ``loop``, whose tasks and partitions are ``header``'s tables: it calls this schedule's
        hooks from now on."""
        self.state = state = loop.state
        self.task_index = {name: i for i, name in enumerate(header.tasks)}
        self.ssp_index = {p.ssp: i for i, p in enumerate(header.partitions)}
        self.tasks = [state.by_name[name] for name in header.tasks]
        self.started = [0] * len(self.tasks)
        loop.use_schedule(self)
        self._unsubscribe = state.bus.subscribe(self._observe, _OBSERVED)

    def close(self) -> None:
        """The container stops: stop observing."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    # -- the run loop's hooks ---------------------------------------------------------------------------
    def tick(self) -> None:
        """Once per loop iteration, before the timers."""

    def commit_timer_fired(self) -> None:
        """The clock's commit timer fired."""

    def loop_ended(self) -> None:
        """The loop left its main phase (stop requested, done, or failed)."""

    def step(self, task: int, seq: int) -> asyncio.Future[None] | None:
        """Task ``task``'s coroutine of message ``seq`` is about to run a step: None to go on now, or a
        future to wait for first (then ask again)."""
        return None

    def task_ending(self, ti: TaskInstance) -> bool:
        """``ti``'s end-of-stream operation could run now: True to run it, False to hold it (the loop
        asks again when woken)."""
        return True

    # -- the message paths' hooks (loop/pump.py, loop/rounds.py, loop/loop_state.py) --------------------
    def dispatched(
        self, ti: TaskInstance, ssp: SystemStreamPartition, offset: str, callback: TaskCallbackImpl | None
    ) -> None:
        """A message starts on the general path, just before the task sees it (``callback``: its async
        callback; None: a sync call on the loop thread)."""
        task = self.task_index[ti.name]
        self.started[task] += 1
        if callback is not None:
            self._seq_of[callback] = self.started[task] - 1
        self.on_started(task, self.ssp_index[ssp], offset)

    def ran(
        self, ti: TaskInstance, first: IncomingMessageEnvelope, failed: Failed | None, count: int
    ) -> None:
        """``count`` messages of ``first``'s partition, from ``first`` on, ran inline one after another
        (``failed``: the last one's call raised)."""
        ssp = first.ssp
        last = failed[0].offset if failed is not None else ti.last_offsets[ssp]
        task = self.task_index[ti.name]
        self.started[task] += count
        self.on_run(task, self.ssp_index[ssp], count, first.offset, last)

    def ran_round(
        self, tasks: Sequence[TaskInstance], firsts: Sequence[IncomingMessageEnvelope], outcome: Outcome
    ) -> None:
        """A round ran inline: ``rows`` full rows (one message of each task's partition in turn), then one
        more message of each of the first ``extra`` tasks (a call that raised counts: it started)."""
        rows, position, row, last_row, _ = outcome
        extra = 0 if row is None else position + 1
        ends: list[tuple[IncomingMessageEnvelope, str | None]] = []
        for i, first in enumerate(firsts):
            envelope = row[i] if row is not None and i < extra else None if last_row is None else last_row[i]
            ends.append((first, None if envelope is None else envelope.offset))
        indexes = [self.task_index[ti.name] for ti in tasks]
        for i, task in enumerate(indexes):
            self.started[task] += rows + 1 if i < extra else rows
        ssps = [self.ssp_index[first.ssp] for first, _ in ends]
        offsets = [(first.offset, first.offset if last is None else last) for first, last in ends]
        self.on_round(indexes, ssps, offsets, rows, extra)

    def taken(self, callback: TaskCallbackImpl, error: BaseException | None) -> bool:
        """The loop takes the completion of an async callback (in the order it takes them): handled now."""
        if error is None:
            self.completed(callback)
        return True

    def polled(self, ssp: SystemStreamPartition, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """A batch of ``ssp`` was buffered as polled: here nothing."""

    def completed(self, callback: TaskCallbackImpl) -> None:
        """The completion of ``callback`` is handled: :meth:`on_completed` with its message number."""
        seq = self._seq_of.pop(callback, None)
        if seq is not None:
            self.on_completed(self.task_index[callback.task_name], seq)

    def coroutine(self, ti: TaskInstance, coroutine: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, Any]:
        """``coroutine`` (of the message of ``ti`` just dispatched) run by :func:`stepped`."""
        task = self.task_index[ti.name]
        stepping: Coroutine[Any, Any, Any] = stepped(coroutine, self, task, self.started[task] - 1)
        return stepping

    # -- observation --------------------------------------------------------------------------------------
    def _observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.EndOfStreamReached):
            if event.ssp is not None:
                self.on_partition_end(self.ssp_index[event.ssp])
        elif isinstance(event, ev.WindowFired):
            self.on_window(self.task_index[event.task])
        elif isinstance(event, ev.Committed):
            self.on_committed()

    def on_started(self, task: int, ssp: int, offset: str) -> None:
        """A message of partition ``ssp`` starts on task ``task`` (its ``started`` count already counts
        it)."""

    def on_run(self, task: int, ssp: int, count: int, first: str, last: str) -> None:
        """``count`` messages of partition ``ssp`` started one after another (task ``task``'s ``started``
        count counts them already); here each is :meth:`on_started` (those between the ends with the
        offset "": not known)."""
        for i in range(count):
            self.on_started(task, ssp, first if i == 0 else last if i == count - 1 else "")

    def on_round(
        self, tasks: list[int], ssps: list[int], ends: list[tuple[str, str]], rows: int, extra: int
    ) -> None:
        """A round of partitions ``ssps`` of tasks ``tasks`` ran (see :meth:`ran_round`; ``ends``: first
        and last offsets); here each message is :meth:`on_started`, row by row."""
        for row in range(rows + 1):
            for i in range(extra if row == rows else len(ssps)):
                count = rows + 1 if i < extra else rows
                first, last = ends[i]
                self.on_started(tasks[i], ssps[i], first if row == 0 else last if row == count - 1 else "")

    def on_completed(self, task: int, seq: int) -> None:
        """The loop takes the completion of task ``task``'s callback ``seq``."""

    def on_partition_end(self, ssp: int) -> None:
        """Partition ``ssp``'s end-of-stream was taken."""

    def on_window(self, task: int) -> None:
        """Task ``task``'s window ran."""

    def on_committed(self) -> None:
        """A task committed."""


@types.coroutine
def stepped(coroutine: Any, schedule: Schedule, task: int, seq: int) -> Generator[Any, Any, Any]:
    """Run ``coroutine`` in the asyncio task that awaits this, step by step: before each step (the first
    run, each resumption after an await) :meth:`Schedule.step` is asked, and the step waits for the
    future it returns (not a step that an error, a cancellation, is thrown into). What the coroutine
    awaits passes through untouched (the task, its context and ``asyncio.current_task()`` are the
    caller's)."""
    value: Any = None
    error: BaseException | None = None
    while True:
        try:
            # A step that an error is thrown into (a cancellation) runs at once.
            while error is None and (turn := schedule.step(task, seq)) is not None:
                yield from turn
        except BaseException:
            coroutine.close()  # cancelled while waiting for its turn
            raise
        try:
            yielded = coroutine.send(value) if error is None else coroutine.throw(error)
        except StopIteration as stop:
            return stop.value
        value, error = None, None
        try:
            value = yield yielded
        except BaseException as exc:  # thrown in by the task (a cancellation): into the coroutine, in turn
            error = exc


class ScheduleRecorder(Schedule):
    """Records the schedule of a run into ``directory`` (``job.record.path``)."""

    def __init__(self, directory: Path, config: Config) -> None:
        super().__init__()
        self.directory = directory
        self._job = (config.job_name(), str(config.value("job.id")))
        self._config = {key: str(config.get_str(key)) for key in SCHEDULE_KEYS}
        self.writer: ScheduleWriter | None = None

    def attach(self, loop: RunLoop) -> None:
        """Write the header (tables, starting checkpoint, config) and start recording."""
        state = loop.state
        partitions = [
            PartitionEntry(ssp, index, ti.starting_offsets[ssp], ti.last_offsets.get(ssp))
            for index, ti in enumerate(state.tasks)
            for ssp in sorted(ti.ssps)
        ]
        header = Header(self._job, tuple(ti.name for ti in state.tasks), tuple(partitions), self._config)
        self.writer = ScheduleWriter(self.directory, header)
        self.observe(loop, header)

    def polled(self, ssp: SystemStreamPartition, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """Recorded: the batch's digests."""
        assert self.writer is not None
        self.writer.polled(self.ssp_index[ssp], envelopes)

    def dispatched(
        self, ti: TaskInstance, ssp: SystemStreamPartition, offset: str, callback: TaskCallbackImpl | None
    ) -> None:
        """Recorded (the base class's bookkeeping, in line: this runs for every message dispatched)."""
        task = self.task_index[ti.name]
        seq = self.started[task]
        self.started[task] = seq + 1
        if callback is not None:
            self._seq_of[callback] = seq
        assert self.writer is not None
        self.writer.dispatch(self.ssp_index[ssp], offset)

    def on_started(self, task: int, ssp: int, offset: str) -> None:
        """Recorded."""
        assert self.writer is not None
        self.writer.dispatch(ssp, offset)

    def on_run(self, task: int, ssp: int, count: int, first: str, last: str) -> None:
        """Recorded: one record."""
        assert self.writer is not None
        self.writer.run(ssp, count, first, last)

    def on_round(
        self, tasks: list[int], ssps: list[int], ends: list[tuple[str, str]], rows: int, extra: int
    ) -> None:
        """Recorded: one record."""
        assert self.writer is not None
        self.writer.round(ssps, rows, extra, ends)

    def on_completed(self, task: int, seq: int) -> None:
        """Recorded."""
        assert self.writer is not None
        self.writer.complete(task, seq)

    def on_partition_end(self, ssp: int) -> None:
        """Recorded."""
        assert self.writer is not None
        self.writer.end_of_stream(ssp)

    def on_committed(self) -> None:
        """The recording is flushed."""
        assert self.writer is not None
        self.writer.flush()

    def step(self, task: int, seq: int) -> asyncio.Future[None] | None:
        """Recorded; the step goes on at once."""
        assert self.writer is not None
        self.writer.step(task, seq)
        return None

    def task_ending(self, ti: TaskInstance) -> bool:
        """Recorded; it runs."""
        assert self.writer is not None
        self.writer.task_end_of_stream(self.task_index[ti.name])
        return True

    def commit_timer_fired(self) -> None:
        """Recorded."""
        assert self.writer is not None
        self.writer.commit_timer()

    def on_window(self, task: int) -> None:
        """Recorded."""
        assert self.writer is not None
        self.writer.window(task)

    def loop_ended(self) -> None:
        """Recorded: a requested stop, or the job ending by itself; nothing after a failure (a replay
        stops where the recording ends)."""
        state = self.state
        assert self.writer is not None and state is not None
        if state.failure is None:
            self.writer.end(STOPPED if state.stop_requested else ENDED)
        self.writer.flush()

    def close(self) -> None:
        """Flush and close the recording."""
        super().close()
        if self.writer is not None:
            self.writer.close()


__all__ = ["Schedule", "ScheduleRecorder", "stepped"]
