"""Replay of a recorded schedule: the job runs again from the recorded starting checkpoint over the same
inputs, and the recorded schedule is forced on it.

The replayer walks the recording's records with a cursor, one at a time, and lets the run do only what the
record at the cursor says: the :class:`~samza_nb.chooser.replay.ReplayChooser` hands out only the
recorded next message (holding the others; nothing more until that one started), with the room of the
recorded run it starts, or the rest of the recorded round's row and the room of its rows
(:mod:`~samza_nb.container.recording.replay_rounds`): the loop takes those straight from the buffers, as
the recorded run did, so runs and rounds replay at about a plain run's speed; a completion of an async
callback is held until its record (:meth:`ScheduleReplayer.taken`: the loop takes it then), a step of an
``async def process`` waits for its record (:meth:`ScheduleReplayer.step`), and window and commit fire
when their records come (the clock timers are off). So outputs come out in the recorded order and stores
end the same.

Where the run and the recording part (an input message with another offset, an end-of-stream where the
recording has a message, a message whose digest is not the recorded one: same offset, another key or
value, ...) the run fails with a :class:`ReplayDivergedError` naming the position. Each batch polled is
checked against the recorded digests as it is buffered (:meth:`ScheduleReplayer.polled`, at C speed:
:class:`~samza_nb.container.recording.message_digests.RecordedDigests`): a partition holding a message that
differs replays one message at a time from then on, so the run stops at that message, after the ones
before it.
At a requested stop's record the run stops (committing), as it did; at the end of a recording without one
(a crash, or a failure) it stops there too, committing. A recording whose job ended by itself ends so again.

With a thread pool (``job.container.thread.pool.size``) or a ``process_async`` task, dispatches and
completions keep their recorded order, but what calls running at once do meanwhile is not forced.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from samza_nb.chooser.base import NO_ROUND
from samza_nb.chooser.replay import ReplayChooser
from samza_nb.container.recording.message_digests import matches, read_recorded
from samza_nb.container.recording.recording import (
    COMMIT,
    COMPLETE,
    DISPATCH,
    END,
    EOS,
    ROUND,
    RUN,
    STEP,
    STOPPED,
    TASK_EOS,
    WINDOW,
    Entry,
    Recording,
)
from samza_nb.container.recording.replay_checks import (
    ReplayDivergedError,
    check_layout,
    differing_input,
    older_than_start,
    parted,
    recorded_config,
    recorded_start,
)
from samza_nb.container.recording.replay_rounds import round_parts, round_rest
from samza_nb.container.recording.schedule import Schedule

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser
    from samza_nb.config import Config
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.loop_state import Completion
    from samza_nb.container.loop.run_loop import RunLoop
    from samza_nb.container.loop.task_instance import TaskInstance


class ScheduleReplayer(Schedule):
    """Forces the schedule of a :class:`~samza_nb.container.recording.recording.Recording` on a run."""

    clock_timers = False

    def __init__(self, recording: Recording) -> None:
        super().__init__()
        self.recording = recording
        self._entries = recording.entries(runs=True)
        self.entry: Entry | None = None
        self._done = 0  # messages of the RUN or ROUND at the cursor that started
        self.position = 0  # inputs (messages and end-of-streams) the cursor reached
        self.record = 0  # records the cursor reached
        self._awaiting = False  # the chooser handed out the record's message; it has not started yet
        self._free = False  # past the end of the recording: nothing is held any more
        self._held: dict[tuple[int, int], Completion] = {}
        self._waiting: dict[tuple[int, int], asyncio.Future[None]] = {}
        self._unchecked: set[int] = set()  # partitions whose messages may be older than their start
        self._digests = read_recorded(recording.directory, len(recording.header.partitions))
        """Each partition's recorded message digests (None: a recording before version 3)."""
        self._suspect: set[int] = set()  # partitions that buffered a message differing from the recording

    # -- the container's hooks --------------------------------------------------------------------------
    def job_config(self, config: Config) -> Config:
        """``config`` with the recorded values of the keys the schedule depends on
        (:func:`~samza_nb.container.recording.replay_checks.recorded_config`)."""
        return recorded_config(self.recording, config)

    def starting_point(
        self,
        task: str,
        starting: dict[SystemStreamPartition, str],
        last: dict[SystemStreamPartition, str],
        has_stores: bool,
    ) -> tuple[dict[SystemStreamPartition, str], dict[SystemStreamPartition, str]]:
        """The recorded starting checkpoint of ``task``
        (:func:`~samza_nb.container.recording.replay_checks.recorded_start`)."""
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
        self._done = 0
        if entry is None:
            self._release_all()
            return
        if entry.kind in (DISPATCH, EOS, RUN, ROUND):
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

    def _diverged(self, found: str, ahead: int = 0) -> None:
        """The run and the recording part here (``ahead``: that many messages into the run or round at
        the cursor): the run fails naming the position."""
        state = self.state
        assert state is not None
        if state.failure is None:
            at = (self.position + ahead, self.record)
            state.fail_with(parted(self.recording, at, self.entry, self._done + ahead, found))

    def _found(self, ssp: SystemStreamPartition, offset: str | None) -> str:
        return f"{ssp} end-of-stream" if offset is None else f"{ssp}@{offset}"

    # -- what the run does ----------------------------------------------------------------------------------
    def choose_run(
        self, held: dict[SystemStreamPartition, IncomingMessageEnvelope]
    ) -> tuple[IncomingMessageEnvelope | None, int]:
        """The message to hand out now of those ``held`` (one per partition), or None; with the room of
        its run: how many more of its partition the recorded run at the cursor has (0 unless it is one and
        the partition buffered no message that differs from the recording)."""
        state = self.state
        if self._awaiting or self._free or state is None or state.failure is not None:
            return None, 0
        if self._unchecked:
            skipped = older_than_start(self.recording.header, self.tasks, self._unchecked, held)
            if skipped is not None:
                return skipped, 0
        entry = self.entry
        if entry is None or entry.kind not in (DISPATCH, EOS, RUN, ROUND):
            return None, 0
        index = entry.ssp_at(self._done)
        ssp = self.recording.header.partitions[index].ssp
        envelope = held.get(ssp)
        if envelope is None:
            return None, 0
        end = envelope.is_end_of_stream
        if (entry.kind == EOS and end) or (
            entry.kind != EOS and not end and self._offset_at(self._done) in ("", envelope.offset)
        ):
            if not end and self._digests is not None and not self._same_message(index, envelope):
                return None, 0
            del held[ssp]
            self._awaiting = True
            if entry.kind != RUN or entry.ssp in self._suspect:
                return envelope, 0
            return envelope, entry.value - self._done - 1
        self._diverged(self._found(ssp, None if end else envelope.offset))
        return None, 0

    def choose_round(
        self, held: dict[SystemStreamPartition, IncomingMessageEnvelope]
    ) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """Right after the message at the cursor was handed out with no room: at a recorded round, the
        rest of its row that ``held`` holds and the room of the round's further rows
        (:func:`~samza_nb.container.recording.replay_rounds.round_rest`); else nothing."""
        entry = self.entry
        state = self.state
        if not self._awaiting or entry is None or entry.kind != ROUND or state is None or state.failure:
            return NO_ROUND
        header = self.recording.header
        return round_rest(header, entry, self._done, held, self._digests, self._suspect)

    def _offset_at(self, index: int) -> str:
        """The offset of message ``index`` of the record at the cursor ("": not recorded)."""
        return "" if self.entry is None else self.entry.offset_at(index)

    def polled(self, ssp: SystemStreamPartition, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """A batch polled: a partition holding a message that differs from the recording replays one
        message at a time from now on (its run stops at that message, which fails the replay)."""
        index = self.ssp_index.get(ssp)
        recorded = self._digests
        if index is not None and recorded is not None and recorded[index].first_difference(envelopes) >= 0:
            self._suspect.add(index)

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
            state.fail_with(differing_input(self.recording.directory, envelope, recorded))
        return False

    def on_started(self, task: int, ssp: int, offset: str) -> None:
        """The message handed out started: the next record (or the next message of a recorded run)."""
        entry = self.entry
        if self._free:
            return
        expected_offset = self._offset_at(self._done)
        known = expected_offset != "" and offset != ""  # ("": inside a run)
        if (
            entry is None
            or entry.kind not in (DISPATCH, RUN, ROUND)
            or entry.ssp_at(self._done) != ssp
            or (known and expected_offset != offset)
        ):
            self._diverged(self._started_at(task, ssp, offset))
            return
        self._started(1)

    def on_run(self, task: int, ssp: int, count: int, first: str, last: str) -> None:
        """``count`` messages of a run started: within the recorded run at the cursor, at once (its
        offsets checked at both ends); else one by one (:meth:`on_started`)."""
        entry = self.entry
        done = self._done
        if self._free or entry is None or entry.kind != RUN or entry.ssp != ssp or done + count > entry.value:
            super().on_run(task, ssp, count, first, last)
            return
        for index, offset in ((done, first), (done + count - 1, last)):
            expected_offset = self._offset_at(index)
            if expected_offset != "" and expected_offset != offset:
                self._diverged(self._started_at(task, ssp, offset))
                return
        self._started(count)

    def on_round(
        self, tasks: list[int], ssps: list[int], ends: list[tuple[str, str]], rows: int, extra: int
    ) -> None:
        """A round ran: within the recorded round at the cursor, at once (each partition's offsets checked
        at both ends: :func:`~samza_nb.container.recording.replay_rounds.round_parts`); else one message
        at a time (:meth:`on_started`)."""
        entry = self.entry
        if self._free or entry is None or entry.kind != ROUND:
            super().on_round(tasks, ssps, ends, rows, extra)
            return
        parted = round_parts(entry, self._done, ssps, ends, rows, extra)
        if parted is not None:
            ahead, ssp, offset = parted
            task = self.recording.header.partitions[ssp].task
            if offset:
                self._diverged(self._started_at(task, ssp, offset), ahead)
            else:
                self._diverged(f"task {self.tasks[task].name!r} past the recorded round", ahead)
            return
        self._started(rows * len(ssps) + extra)

    def _started_at(self, task: int, ssp: int, offset: str) -> str:
        return f"task {self.tasks[task].name!r} started {self.recording.header.partitions[ssp].ssp}@{offset}"

    def _started(self, count: int) -> None:
        """``count`` messages of the record at the cursor started: the next record once all did."""
        self._awaiting = False
        entry = self.entry
        if entry is not None and entry.kind in (RUN, ROUND):
            self._done += count
            if self._done < entry.value:
                self.position += count  # (the position of the run's next message)
                return
            self.position += count - 1
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


__all__ = ["ReplayChooser", "ReplayDivergedError", "ScheduleReplayer"]
