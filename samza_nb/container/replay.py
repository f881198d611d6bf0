"""Replay of a recorded schedule: the job runs again from the recorded starting checkpoint over the same
inputs, and the recorded schedule is forced on it.

The replayer walks the recording's records with a cursor, one at a time, and lets the run do only what the
record at the cursor says: the :class:`ReplayChooser` hands out only the recorded next message (holding the
others; nothing more until that one started), a completion of an async callback is held until its record
(:meth:`ScheduleReplayer.taken`: the loop takes it then), a step of an ``async def process`` waits for its
record (:meth:`ScheduleReplayer.step`), and window and commit fire when their records come (the clock
timers are off). So outputs come out in the recorded order and stores end the same.

Where the run and the recording part (an input message with another offset, an end-of-stream where the
recording has a message, a message whose digest is not the recorded one: same offset, another key or
value, ...) the run fails with a :class:`ReplayDivergedError` naming the position. At a
requested stop's record the run stops (committing), as it did; at the end of a recording without one (a
crash, or a failure) it stops there too, committing. A recording whose job ended by itself ends so again.

With a thread pool (``job.container.thread.pool.size``) or a ``process_async`` task, dispatches and
completions keep their recorded order, but what calls running at once do meanwhile is not forced.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from samza_nb.container.loop.schedule import Schedule, ScheduleRecorder
from samza_nb.container.message_digests import describe, digest, matches, read_digests
from samza_nb.container.recording import (
    COMMIT,
    COMPLETE,
    DISPATCH,
    END,
    EOS,
    STEP,
    STOPPED,
    TASK_EOS,
    WINDOW,
    Entry,
    Recording,
)
from samza_nb.container.replay_checks import check_layout, expected, recorded_config, recorded_start
from samza_nb.errors import ConfigError, SamzaError

if TYPE_CHECKING:
    import os

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.config import Config
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.loop_state import Completion
    from samza_nb.container.loop.run_loop import RunLoop
    from samza_nb.container.loop.task_instance import TaskInstance


class ReplayDivergedError(SamzaError):
    """A replayed run and its recording parted: the message names the first position where they do,
    what the recording has there and what the run found."""


def open_schedule(config: Config, replay: str | os.PathLike[str] | None) -> Schedule:
    """The schedule of a run: a replay of the recording in ``replay``, else a recorder when
    ``job.record.path`` is set, else a :class:`Schedule` that does nothing (the default: nothing
    recorded, nothing forced, nothing spent)."""
    path = config.get_str("job.record.path")
    if replay is None and not path:
        return Schedule()
    if config.get_int("job.container.count", 1) != 1:
        raise ConfigError(
            "job.record.path / replay: a schedule is recorded and replayed for a job run as one container "
            "(job.container.count = 1)",
            key="job.record.path" if replay is None else "job.container.count",
        )
    if replay is None:
        assert path is not None
        return ScheduleRecorder(Path(path), config)
    if path:
        raise ConfigError(
            f"job.record.path = {path}: a replay does not record; unset it to replay {replay}",
            key="job.record.path",
        )
    return ScheduleReplayer(Recording(replay))


class ScheduleReplayer(Schedule):
    """Forces the schedule of a :class:`~samza_nb.container.recording.Recording` on a run."""

    clock_timers = False

    def __init__(self, recording: Recording) -> None:
        super().__init__()
        self.recording = recording
        self._entries = recording.entries()
        self.entry: Entry | None = None
        self.position = 0  # inputs (messages and end-of-streams) the cursor reached
        self.record = 0  # records the cursor reached
        self._awaiting = False  # the chooser handed out the record's message; it has not started yet
        self._free = False  # past the end of the recording: nothing is held any more
        self._held: dict[tuple[int, int], Completion] = {}
        self._waiting: dict[tuple[int, int], asyncio.Future[None]] = {}
        self._unchecked: set[int] = set()  # partitions whose messages may be older than their start
        self._digests = read_digests(recording.directory, len(recording.header.partitions))
        """Each partition's recorded message digests by offset (None: a recording before version 3)."""

    # -- the container's hooks --------------------------------------------------------------------------
    def job_config(self, config: Config) -> Config:
        """``config`` with the recorded values of the keys the schedule depends on
        (:func:`~samza_nb.container.replay_checks.recorded_config`)."""
        return recorded_config(self.recording, config)

    def starting_point(
        self,
        task: str,
        starting: dict[SystemStreamPartition, str],
        last: dict[SystemStreamPartition, str],
        has_stores: bool,
    ) -> tuple[dict[SystemStreamPartition, str], dict[SystemStreamPartition, str]]:
        """The recorded starting checkpoint of ``task``
        (:func:`~samza_nb.container.replay_checks.recorded_start`)."""
        return recorded_start(self.recording, task, starting, last, has_stores)

    def chooser(self, chooser: MessageChooser) -> MessageChooser:
        """A :class:`ReplayChooser` (the job's own chooser is not asked)."""
        return ReplayChooser(self)

    def attach(self, loop: RunLoop) -> None:
        """Check the job's tasks and partitions are the recording's, then observe the loop and move to the
        first record."""
        header = self.recording.header
        check_layout(self.recording, {ti.name: set(ti.ssps) for ti in loop.state.tasks})
        self.observe(loop, header)
        self._unchecked = set(range(len(header.partitions)))
        self._advance()

    # -- the cursor ---------------------------------------------------------------------------------------
    def _advance(self) -> None:
        """Move to the next record and let what it waits for go."""
        entry = self.entry = next(self._entries, None)
        state = self.state
        assert state is not None
        self.record += 1
        if entry is None:
            self._release_all()
            return
        if entry.kind in (DISPATCH, EOS):
            self.position += 1
        elif entry.kind == COMPLETE:
            held = self._held.pop((entry.task, entry.seq), None)
            if held is not None:
                state.requeue(held)
        elif entry.kind == STEP:
            waiting = self._waiting.pop((entry.task, entry.seq), None)
            if waiting is not None and not waiting.done():
                waiting.set_result(None)
        state.wakeup.set()

    def _release_all(self) -> None:
        """Past the end of the recording: stop here (committing), and hold nothing any more."""
        state = self.state
        assert state is not None
        self._free = True
        for key in sorted(self._held):
            state.requeue(self._held.pop(key))
        for waiting in self._waiting.values():
            if not waiting.done():
                waiting.set_result(None)
        self._waiting.clear()
        state.stop()

    def _diverged(self, found: str) -> None:
        """The run and the recording part here: the run fails naming the position."""
        state = self.state
        assert state is not None
        if state.failure is None:
            state.fail_with(
                ReplayDivergedError(
                    f"replay of {self.recording.directory}: the run and the recording part at position "
                    f"{self.position} (record {self.record}): "
                    f"expected {expected(self.recording.header, self.entry)}, found {found}"
                )
            )

    def _found(self, ssp: SystemStreamPartition, offset: str | None) -> str:
        return f"{ssp} end-of-stream" if offset is None else f"{ssp}@{offset}"

    # -- what the run does ----------------------------------------------------------------------------------
    def choose(
        self, held: dict[SystemStreamPartition, IncomingMessageEnvelope]
    ) -> IncomingMessageEnvelope | None:
        """The message to hand out now of those ``held`` (one per partition), or None."""
        state = self.state
        if self._awaiting or self._free or state is None or state.failure is not None:
            return None
        if self._unchecked:
            skipped = self._older_than_start(held)
            if skipped is not None:
                return skipped
        entry = self.entry
        if entry is None or entry.kind not in (DISPATCH, EOS):
            return None
        ssp = self.recording.header.partitions[entry.ssp].ssp
        envelope = held.get(ssp)
        if envelope is None:
            return None
        end = envelope.is_end_of_stream
        if (entry.kind == EOS and end) or (
            entry.kind == DISPATCH and not end and entry.offset in ("", envelope.offset)
        ):
            if not end and self._digests is not None and not self._same_message(entry.ssp, envelope):
                return None
            del held[ssp]
            self._awaiting = True
            return envelope
        self._diverged(self._found(ssp, None if end else envelope.offset))
        return None

    def _same_message(self, index: int, envelope: IncomingMessageEnvelope) -> bool:
        """True unless the recording has another message at ``envelope``'s offset (then the run fails,
        naming stream, partition, offset and what each has)."""
        assert self._digests is not None
        recorded = self._digests[index].get(envelope.offset)
        if recorded is None or matches(envelope, recorded):
            return True
        state = self.state
        assert state is not None
        if state.failure is None:
            ssp = envelope.ssp
            state.fail_with(
                ReplayDivergedError(
                    f"replay of {self.recording.directory}: the input differs from the recording at stream "
                    f"{ssp.system}.{ssp.stream} partition {ssp.partition} offset {envelope.offset}: the "
                    f"recording read another message there (digest {recorded:#x}), this run reads "
                    f"{describe(envelope)} (digest {digest(envelope):#x}); a replay needs the same input"
                )
            )
        return False

    def _older_than_start(
        self, held: dict[SystemStreamPartition, IncomingMessageEnvelope]
    ) -> IncomingMessageEnvelope | None:
        """A held message older than its partition's starting offset (handed out: the loop skips it)."""
        for index in list(self._unchecked):
            ssp = self.recording.header.partitions[index].ssp
            envelope = held.get(ssp)
            if envelope is None:
                continue
            ti = self.tasks[self.recording.header.partitions[index].task]
            start = ti.starting_offsets[ssp]
            if not envelope.is_end_of_stream and ti.comparators[ssp](envelope.offset, start) < 0:
                return held.pop(ssp)
            self._unchecked.discard(index)
        return None

    def on_started(self, task: int, ssp: int, offset: str) -> None:
        """The message handed out started: the next record."""
        entry = self.entry
        if self._free:
            return
        known = entry is not None and entry.offset != "" and offset != ""  # ("": inside a run)
        if entry is None or entry.kind != DISPATCH or entry.ssp != ssp or (known and entry.offset != offset):
            self._diverged(
                f"task {self.tasks[task].name!r} started {self.recording.header.partitions[ssp].ssp}@{offset}"
            )
            return
        self._awaiting = False
        self._advance()

    def on_partition_end(self, ssp: int) -> None:
        """The end-of-stream handed out was taken: the next record."""
        entry = self.entry
        if self._free:
            return
        if entry is None or entry.kind != EOS or entry.ssp != ssp:
            self._diverged(self._found(self.recording.header.partitions[ssp].ssp, None))
            return
        self._awaiting = False
        self._advance()

    def on_completed(self, task: int, seq: int) -> None:
        """The loop took a completion at its record: the next record."""
        entry = self.entry
        if self._free:
            return
        if entry is None or entry.kind != COMPLETE or (entry.task, entry.seq) != (task, seq):
            self._diverged(f"the completion of task {self.tasks[task].name!r} message {seq}")
            return
        self._advance()

    def taken(self, callback: TaskCallbackImpl, error: BaseException | None) -> bool:
        """The loop takes a completion: at its record it is handled (the next record), before it held
        (given back at its record); a failure goes at once."""
        state = self.state
        assert state is not None
        key = (self.task_index[callback.task_name], callback.seq)
        entry = self.entry
        at_turn = entry is not None and entry.kind == COMPLETE and (entry.task, entry.seq) == key
        if error is not None or self._free or at_turn or state.failure is not None:
            if error is None:
                self.completed(callback)
            return True
        completion: Completion = (callback, error)
        self._held[key] = completion
        return False

    def step(self, task: int, seq: int) -> asyncio.Future[None] | None:
        """A coroutine's step goes at its record (the cursor moves on as it runs); before that it waits."""
        entry = self.entry
        if self._free or (self.state is not None and self.state.failure is not None):
            return None
        if entry is not None and entry.kind == STEP and (entry.task, entry.seq) == (task, seq):
            self._advance()
            return None
        waiting = asyncio.get_running_loop().create_future()
        self._waiting[(task, seq)] = waiting
        return waiting

    def task_ending(self, ti: TaskInstance) -> bool:
        """A task's end-of-stream operation runs at its record (a window recorded before it runs first);
        a version 1 recording has none: at once."""
        state = self.state
        if self._free or self.recording.header.version < 2 or (state is not None and state.failure):
            return True
        entry = self.entry
        if entry is not None and entry.kind == TASK_EOS and entry.task == self.task_index[ti.name]:
            self._advance()
            return True
        return False

    def tick(self) -> None:
        """Each loop iteration: fire the commit timer and the stop recorded at the cursor, or ask for the
        window recorded there (the cursor moves on once it ran: :meth:`on_window`)."""
        state = self.state
        assert state is not None
        while (entry := self.entry) is not None:
            if entry.kind == WINDOW:
                ti = self.tasks[entry.task]
                if not ti.need_window and not ti.window_in_flight:
                    ti.request_window()
                return
            if entry.kind == COMMIT:
                for ti in state.tasks:
                    if not ti.commit_in_flight:
                        ti.request_commit()
            elif entry.kind == END and entry.value == STOPPED:
                state.stop()
            else:
                return
            self._advance()

    def on_window(self, task: int) -> None:
        """A window ran (asked for at its record): the next record."""
        entry = self.entry
        if self._free:
            return
        if entry is None or entry.kind != WINDOW or entry.task != task:
            self._diverged(f"the window of task {self.tasks[task].name!r}")
            return
        self._advance()

    def loop_ended(self) -> None:
        """A run that ended by itself must have reached the recorded end."""
        state = self.state
        assert state is not None
        entry = self.entry
        if state.failure is None and not state.stop_requested and entry is not None and entry.kind != END:
            self._diverged("the job's end")


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


__all__ = ["ReplayChooser", "ReplayDivergedError", "ScheduleReplayer", "open_schedule"]
