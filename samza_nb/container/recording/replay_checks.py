"""What a replay checks: that a job can replay a recording (before it runs), and the words for the record
where a run parts from its recording (:func:`expected`).

A replay runs the recorded job (:func:`recorded_config`: the recording's values of the keys the schedule
depends on), from the recorded starting checkpoint (:func:`recorded_start`: a task with stores needs them as
they were then), over the recorded tasks and partitions (:func:`check_layout`). Each refuses in one line
naming what differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb.container.recording.recording import (
    COMMIT,
    COMPLETE,
    DISPATCH,
    EOS,
    STEP,
    STOPPED,
    TASK_EOS,
    WINDOW,
)
from samza_nb.errors import ConfigError, SamzaError

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.container.recording.recording import Entry, Header, Recording


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


def expected(header: Header, entry: Entry | None) -> str:
    """What the record ``entry`` of a recording with ``header`` expects, in words (None: the end)."""
    if entry is None:
        return "the end of the recording"
    if entry.kind in (DISPATCH, EOS):
        row = header.partitions[entry.ssp]
        if entry.kind == EOS:
            what = f"{row.ssp} end-of-stream"
        else:  # a message inside a recorded run may have no offset: the partition's next one
            what = f"{row.ssp}@{entry.offset}" if entry.offset else f"the next message of {row.ssp}"
        return f"task {header.tasks[row.task]!r} {what}"
    if entry.kind in (COMPLETE, STEP):
        what = "the completion" if entry.kind == COMPLETE else "a step"
        return f"{what} of task {header.tasks[entry.task]!r} message {entry.seq}"
    if entry.kind == WINDOW:
        return f"the window of task {header.tasks[entry.task]!r}"
    if entry.kind == TASK_EOS:
        return f"the end-of-stream of task {header.tasks[entry.task]!r}"
    if entry.kind == COMMIT:
        return "the commit timer"
    return "a requested stop" if entry.value == STOPPED else "the job's end"


def _offsets(offsets: dict[SystemStreamPartition, str]) -> str:
    return "{" + ", ".join(f"{ssp}: {offset}" for ssp, offset in sorted(offsets.items())) + "}"


def _layout(tasks: Mapping[str, set[SystemStreamPartition]]) -> str:
    return "; ".join(
        f"{name}: {', '.join(str(s) for s in sorted(ssps))}" for name, ssps in sorted(tasks.items())
    )


__all__ = ["check_layout", "expected", "recorded_config", "recorded_start"]
