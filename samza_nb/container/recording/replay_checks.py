"""What a replay checks: that a job can replay a recording (before it runs), and the words for the record
where a run parts from its recording (:func:`expected`).

A replay runs the recorded job (:func:`recorded_config`: the recording's values of the keys the schedule
depends on), from the recorded starting checkpoint (:func:`recorded_start`: a task with stores needs them as
they were then), over the recorded tasks and partitions (:func:`check_layout`). Each refuses in one line
naming what differs. While it runs, a replay fails with a :class:`ReplayDivergedError` where the run
parts from its recording (:func:`differing_input`: an input message that is not the recorded one), and
hands out first what a partition holds from before its start (:func:`older_than_start`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb.container.recording.message_digests import describe, digest
from samza_nb.container.recording.recording import COMMIT, COMPLETE, END, EOS, STEP, STOPPED, TASK_EOS, WINDOW
from samza_nb.errors import ConfigError, SamzaError

if TYPE_CHECKING:
    from pathlib import Path

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.container.loop.task_instance import TaskInstance
    from samza_nb.container.recording.recording import Entry, Header, Recording


class ReplayDivergedError(SamzaError):
    """A replayed run and its recording parted: the message names the first position where they do,
    what the recording has there and what the run found."""


def recorded_config(recording: Recording, config: Config) -> Config:
    """``config`` with the recorded values of the keys the schedule depends on; a ConfigError when the
    recording is of another job."""
    recorded = recording.header.job[0]
    if config.job_name() != recorded:
        raise ConfigError(
            f"job.name = {config.job_name()!r}, but {recording.directory} recorded job {recorded!r}",
            key="job.name",
        )
    return config.with_overrides(recording.header.config)


def recorded_start(
    recording: Recording,
    task: str,
    starting: dict[SystemStreamPartition, str],
    last: dict[SystemStreamPartition, str],
    has_stores: bool,
) -> tuple[dict[SystemStreamPartition, str], dict[SystemStreamPartition, str]]:
    """The recorded starting checkpoint of ``task`` (starting offsets, checkpointed offsets; not the
    current one). A task with stores needs them as they were then: a SamzaError when its checkpoint has
    moved on."""
    rows = [p for p in recording.header.partitions if p.ssp in starting]
    recorded_last = {p.ssp: p.last for p in rows if p.last is not None}
    if has_stores and recorded_last != last:
        raise SamzaError(
            f"replay of {recording.directory}: task {task!r} has stores, whose state is that of its "
            f"checkpoint {_offsets(last)}, but the recording starts from {_offsets(recorded_last)}; "
            "replay needs the stores as they were when the recording started (replay with a fresh "
            "job.logged.store.base.dir, or a state copied then)"
        )
    return {p.ssp: p.start for p in rows}, recorded_last


def check_layout(recording: Recording, actual: Mapping[str, set[SystemStreamPartition]]) -> None:
    """A SamzaError unless the job's tasks and their partitions (``actual``) are the recording's."""
    header = recording.header
    recorded = {
        name: {p.ssp for p in header.partitions if p.task == i} for i, name in enumerate(header.tasks)
    }
    if recorded != dict(actual):
        raise SamzaError(
            f"replay of {recording.directory}: the job's tasks and partitions "
            f"({_layout(actual)}) are not the recording's ({_layout(recorded)})"
        )


def expected(header: Header, entry: Entry | None, index: int = 0) -> str:
    """What the record ``entry`` of a recording with ``header`` expects, in words (None: the end;
    ``index``: of the message a DISPATCH, RUN or ROUND expects next)."""
    if entry is None:
        return "the end of the recording"
    if entry.kind in (COMPLETE, STEP):
        what = "the completion" if entry.kind == COMPLETE else "a step"
        return f"{what} of task {header.tasks[entry.task]!r} message {entry.seq}"
    if entry.kind == WINDOW:
        return f"the window of task {header.tasks[entry.task]!r}"
    if entry.kind == TASK_EOS:
        return f"the end-of-stream of task {header.tasks[entry.task]!r}"
    if entry.kind == COMMIT:
        return "the commit timer"
    if entry.kind == END:
        return "a requested stop" if entry.value == STOPPED else "the job's end"
    row = header.partitions[entry.ssp_at(index)]  # DISPATCH, RUN, ROUND or EOS
    offset = entry.offset_at(index)
    if entry.kind == EOS:
        what = f"{row.ssp} end-of-stream"
    else:  # a message inside a recorded run may have no offset: the partition's next one
        what = f"{row.ssp}@{offset}" if offset else f"the next message of {row.ssp}"
    return f"task {header.tasks[row.task]!r} {what}"


def parted(
    recording: Recording, at: tuple[int, int], entry: Entry | None, index: int, found: str
) -> ReplayDivergedError:
    """The failure of a replay of ``recording`` that parts from it ``at`` (position, record), where the
    record ``entry`` expects its message ``index`` (:func:`expected`) and the run ``found`` another."""
    return ReplayDivergedError(
        f"replay of {recording.directory}: the run and the recording part at position {at[0]} (record "
        f"{at[1]}): expected {expected(recording.header, entry, index)}, found {found}"
    )


def differing_input(directory: Path, envelope: IncomingMessageEnvelope, recorded: int) -> ReplayDivergedError:
    """The failure of the replay of ``directory`` whose input at ``envelope``'s offset is not the message
    recorded there (``recorded``: its digest), naming stream, partition, offset and what each has."""
    ssp = envelope.ssp
    return ReplayDivergedError(
        f"replay of {directory}: the input differs from the recording at stream "
        f"{ssp.system}.{ssp.stream} partition {ssp.partition} offset {envelope.offset}: the "
        f"recording read another message there (digest {recorded:#x}), this run reads "
        f"{describe(envelope)} (digest {digest(envelope):#x}); a replay needs the same input"
    )


def older_than_start(
    header: Header,
    tasks: list[TaskInstance],
    unchecked: set[int],
    held: dict[SystemStreamPartition, IncomingMessageEnvelope],
) -> IncomingMessageEnvelope | None:
    """A held message of one of the ``unchecked`` partitions (indexes in ``header``; ``tasks`` in its
    order) older than its partition's starting offset, taken out of ``held`` (handed out: the loop skips
    it); a partition whose held message is not older is checked (out of ``unchecked``)."""
    for index in list(unchecked):
        row = header.partitions[index]
        envelope = held.get(row.ssp)
        if envelope is None:
            continue
        ti = tasks[row.task]
        start = ti.starting_offsets[row.ssp]
        if not envelope.is_end_of_stream and ti.comparators[row.ssp](envelope.offset, start) < 0:
            return held.pop(row.ssp)
        unchecked.discard(index)
    return None


def _offsets(offsets: dict[SystemStreamPartition, str]) -> str:
    return "{" + ", ".join(f"{ssp}: {offset}" for ssp, offset in sorted(offsets.items())) + "}"


def _layout(tasks: Mapping[str, set[SystemStreamPartition]]) -> str:
    return "; ".join(
        f"{name}: {', '.join(str(s) for s in sorted(ssps))}" for name, ssps in sorted(tasks.items())
    )


__all__ = [
    "ReplayDivergedError",
    "check_layout",
    "differing_input",
    "expected",
    "older_than_start",
    "parted",
    "recorded_config",
    "recorded_start",
]
