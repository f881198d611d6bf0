"""Where a failed job's failing message is, and the commands that show and reach it.

A task that fails on a message fails its container with a :class:`~samza_nb.errors.TaskFailedError` naming
the message's partition and offset (a container process reports them to its job coordinator, and a job of
several containers fails with them: :class:`~.processes_job.ContainerFailedError`). The failure line then
links it: the ``%samza_browse`` line that shows the message as its stream holds it, and how to get the job
to the moment before it. From a run recorded with ``--record DIR`` that is exact: the replay dispatches the
recorded schedule, so after ``%samza_step K`` (K: the messages dispatched before it in the recording) the
next step is the failing message. Without a recording, a rerun resumes from the last checkpoint, and steps
reach the message in the order the chooser picks.
"""

from __future__ import annotations

from dataclasses import dataclass

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.container.recording.recording import DISPATCH, Recording
from samza_nb.errors import SamzaError, failed_message
from samza_nb.notebook.magics.browse import browse_command
from samza_nb.notebook.runs.processes_job import ContainerFailedError


@dataclass(frozen=True)
class FailingMessage:
    """The message a task failed on: its partition and offset; ``several``: in a job of several containers
    (which steps do not drive: the reach says to rerun it as one)."""

    ssp: SystemStreamPartition
    offset: str
    several: bool = False

    def browse(self) -> str:
        """The ``%samza_browse`` line that shows it."""
        stream = f"{self.ssp.system}.{self.ssp.stream}"
        return browse_command(stream, self.ssp.partition, self.offset)

    def reach(self, record: str | None) -> str:
        """The commands that bring the job to just before it: from the recording in ``record`` when it
        holds the message's dispatch, else a rerun stepped until it."""
        if self.several:
            return (
                f"rerun it as one container (job.container.count = 1): %samza_run --paused, then %samza_step "
                f"until {self.ssp}@{self.offset}"
            )
        if record:
            before = dispatches_before(record, self.ssp, self.offset)
            if before is not None:
                steps = f", then %samza_step {before}" if before else ""
                return f"%samza_run --replay {record} --paused{steps}: the next %samza_step processes it"
        return (
            f"%samza_run --paused, then %samza_step until {self.ssp}@{self.offset} (a run with "
            "--record DIR makes this exact)"
        )

    def link(self, record: str | None) -> str:
        """What the failure line says about it: where it is, the line showing it, the commands reaching it."""
        where = f"{self.ssp}@{self.offset}"
        return f"the failing message {where}: {self.browse()}; to reach it: {self.reach(record)}"


def failing_message(error: BaseException | None) -> FailingMessage | None:
    """The message ``error`` (or an error it was raised from) names: a TaskFailedError's partition and
    offset; None when no message was involved (a window, a commit)."""
    failed = failed_message(error)
    if failed is None or failed.offset is None or not isinstance(failed.ssp, SystemStreamPartition):
        return None
    several, seen = False, 0
    while error is not None and error is not failed and seen < 20:  # a container process reported it
        several = several or isinstance(error, ContainerFailedError)
        error, seen = error.__cause__ or error.__context__, seen + 1
    return FailingMessage(failed.ssp, failed.offset, several)


def dispatches_before(record: str, ssp: SystemStreamPartition, offset: str) -> int | None:
    """How many messages the run recorded in ``record`` dispatched before ``ssp``'s ``offset`` (None when
    the recording is unreadable or never dispatched it)."""
    try:
        recording = Recording(record)
        index = next(i for i, p in enumerate(recording.header.partitions) if p.ssp == ssp)
        count = 0
        for entry in recording.entries():
            if entry.kind != DISPATCH:
                continue
            if entry.ssp == index and entry.offset == offset:
                return count
            count += 1
    except (SamzaError, StopIteration, OSError):
        return None
    return None


__all__ = ["FailingMessage", "dispatches_before", "failing_message"]
