"""Record and replay of a run's schedule: the hooks the run loop and the container call, and the recorder.

A :class:`Schedule` is attached to the run loop's state (``LoopState.schedule``; None, the default, costs
nothing). The loop's message paths call it where messages start, without putting the loop on a slower
path: a message started on the general path (:meth:`Schedule.dispatched`, by ``MessagePump.dispatch`` just
before the task sees it), a run of a sync task's messages (:meth:`Schedule.ran`, once per run, after it)
and a round of sync tasks (:meth:`Schedule.ran_round`, once per round); and where the loop takes an async
completion (:meth:`Schedule.completed`, in the order it takes them). Partition ends, windows (``WindowFired``:
a window is recorded where it ran, not where its timer fired) and commits it sees on the observe bus
(events that are not per message). The loop itself calls :meth:`Schedule.tick` once per iteration,
:meth:`Schedule.commit_timer_fired` when the commit timer fires and :meth:`Schedule.loop_ended` when it
stops. An ``async def process`` runs wrapped by :func:`stepped`, which asks :meth:`Schedule.step` before
each step of the coroutine (its first run and every resumption).

:class:`ScheduleRecorder` writes all that down (:mod:`samza_nb.container.recording_writer`: a run or a
round is one record, and records are written out at commits, at stop and when 64 KiB wait);
:class:`~samza_nb.container.replay.ScheduleReplayer` forces it on a second run, through a
:class:`ReplayChooser` (one message at a time) and the loop's completion queue made a
:class:`GatedCompletions`.
"""

from __future__ import annotations

import threading
import types
from collections import deque
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb.container.loop.task_instance import TaskKind
from samza_nb.container.recording import ENDED, SCHEDULE_KEYS, STOPPED, Header, PartitionEntry
from samza_nb.container.recording_writer import ScheduleWriter
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    import asyncio

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.config import Config
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.task_instance import TaskInstance
    from samza_nb.container.replay import ScheduleReplayer

Completion = tuple["TaskCallbackImpl", "BaseException | None"]

_OBSERVED = (ev.EndOfStreamReached, ev.WindowFired, ev.Committed)
"""The events a schedule observes on the bus (none is per message: the loop keeps its fast paths)."""


class Schedule:
    """What record and replay share: the tables (task and partition indexes of the recording's header),
    the observation of the loop, and the hooks the loop and the container call. Itself it does nothing:
    the schedule of a run neither recorded nor replayed (it never attaches to the loop)."""

    clock_timers = True
    """False while replaying: window and commit fire at their recorded positions, not by the clock."""

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

    def attach(self, state: LoopState) -> None:
        """Start on ``state``'s loop (before it runs); here nothing (``state.schedule`` stays None)."""

    def observe(self, state: LoopState, header: Header) -> None:
        """Observe ``state``'s loop, whose tasks and partitions are ``header``'s tables."""
        self.state = state
        self.task_index = {name: i for i, name in enumerate(header.tasks)}
        self.ssp_index = {p.ssp: i for i, p in enumerate(header.partitions)}
        self.tasks = [state.by_name[name] for name in header.tasks]
        self.started = [0] * len(self.tasks)
        for index, ti in enumerate(self.tasks):
            if ti.kind is TaskKind.COROUTINE:
                ti.process = _stepping(ti.process, self, index)
        state.schedule = self
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

    def ran(self, ti: TaskInstance, ssp: SystemStreamPartition, count: int, first: str, last: str) -> None:
        """``count`` messages of ``ssp``, from offset ``first`` to ``last``, ran inline one after another
        (the last one's call may have raised)."""
        task = self.task_index[ti.name]
        self.started[task] += count
        self.on_run(task, self.ssp_index[ssp], count, first, last)

    def ran_round(
        self,
        tasks: Sequence[TaskInstance],
        ends: Sequence[tuple[IncomingMessageEnvelope, str | None]],
        rows: int,
        extra: int,
    ) -> None:
        """A round ran inline: ``rows`` full rows (one message of each task's partition in turn), then one
        more message of each of the first ``extra`` tasks; ``ends`` holds each partition's first message
        and its last message's offset (None: it ran none)."""
        indexes = [self.task_index[ti.name] for ti in tasks]
        for i, task in enumerate(indexes):
            self.started[task] += rows + 1 if i < extra else rows
        ssps = [self.ssp_index[first.ssp] for first, _ in ends]
        offsets = [(first.offset, first.offset if last is None else last) for first, last in ends]
        self.on_round(indexes, ssps, offsets, rows, extra)

    def completed(self, callback: TaskCallbackImpl) -> None:
        """The loop takes the completion of an async callback (in the order it takes them)."""
        seq = self._seq_of.pop(callback, None)
        if seq is not None:
            self.on_completed(self.task_index[callback.task_name], seq)

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


def _stepping(process: Callable[..., Any], schedule: Schedule, task: int) -> Callable[..., Any]:
    """``process`` (an ``async def``) with each call's coroutine run by :func:`stepped`."""

    def process_stepped(envelope: Any, collector: Any, coordinator: Any) -> Any:
        # ProcessStarted (seen just before this call) counted this message: its number is the last.
        return stepped(process(envelope, collector, coordinator), schedule, task, schedule.started[task] - 1)

    return process_stepped


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

    def attach(self, state: LoopState) -> None:
        """Write the header (tables, starting checkpoint, config) and start recording."""
        partitions = [
            PartitionEntry(ssp, index, ti.starting_offsets[ssp], ti.last_offsets.get(ssp))
            for index, ti in enumerate(state.tasks)
            for ssp in sorted(ti.ssps)
        ]
        header = Header(self._job, tuple(ti.name for ti in state.tasks), tuple(partitions), self._config)
        self.writer = writer = ScheduleWriter(self.directory, header)
        self.observe(state, header)
        index = self.ssp_index
        state.consumers.intake = lambda ssp, envelopes: writer.polled(index[ssp], envelopes)

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


class ReplayChooser:
    """The chooser of a replay: holds each partition's next message and hands out the one the recording
    has next (:meth:`ScheduleReplayer.choose`)."""

    def __init__(self, replayer: ScheduleReplayer) -> None:
        self._replayer = replayer
        self._held: dict[SystemStreamPartition, IncomingMessageEnvelope] = {}

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Nothing to do: the recording says where each partition starts."""

    def start(self) -> None:
        """Nothing to do."""

    def stop(self) -> None:
        """Nothing to do."""

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Held until its turn."""
        self._held[envelope.ssp] = envelope

    def choose(self) -> IncomingMessageEnvelope | None:
        """The recorded next message once it is held, else None."""
        return self._replayer.choose(self._held)


class GatedCompletions(deque[Completion]):
    """The loop's completion queue during a replay: a completion enters it at its record
    (:meth:`ScheduleReplayer.offer`, on the loop thread whichever thread completed it)."""

    def __init__(self, replayer: ScheduleReplayer) -> None:
        super().__init__()
        self._replayer = replayer

    def append(self, completion: Completion) -> None:
        """Offered to the replayer on the loop thread."""
        state = self._replayer.state
        assert state is not None
        loop = state.loop
        if loop is None or threading.get_ident() == state.thread_id:
            self._replayer.offer(completion)
        elif not loop.is_closed():
            loop.call_soon_threadsafe(self._replayer.offer, completion)


__all__ = ["GatedCompletions", "ReplayChooser", "Schedule", "ScheduleRecorder", "stepped"]
