"""The error hierarchy: every error samza_nb raises on purpose derives from :class:`SamzaError`."""

from __future__ import annotations

from typing import Any


class SamzaError(Exception):
    """Root of every deliberate samza_nb error. Its message names the culprit (key, task, SSP, offset)."""


class ConfigError(SamzaError):
    """A configuration key is missing, malformed or has a value outside what is allowed."""

    def __init__(self, message: str, *, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


class TaskFailedError(SamzaError):
    """A task's process, window, commit or callback failed; the container stopped.

    Carries the task name and, where a message was involved, its SSP and offset. The failed message's offset
    is never checkpointed, so a restart processes it again (at-least-once).
    """

    def __init__(
        self,
        message: str,
        *,
        task_name: str | None = None,
        ssp: Any = None,
        offset: str | None = None,
    ) -> None:
        super().__init__(message)
        self.task_name = task_name
        self.ssp = ssp
        self.offset = offset


def failed_message(error: BaseException | None) -> TaskFailedError | None:
    """The TaskFailedError in ``error``'s chain (it, or an error it was raised from or during) that names
    the message a task failed on (its ``ssp`` and ``offset``); None when no message was involved."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, TaskFailedError) and error.offset is not None and error.ssp is not None:
            return error
        error, seen = error.__cause__ or error.__context__, seen + 1
    return None


class CallbackError(SamzaError):
    """A task callback was misused: completed or failed twice, or completed after it timed out."""


class SystemConsumersError(SamzaError):
    """An input system could not deliver messages (unknown SSP, a consumer that failed)."""


class SystemProducerError(SamzaError):
    """An output could not be delivered (unknown stream or partition, a producer that failed)."""


class BadMessageError(SystemProducerError):
    """A message an output cannot store in any attempt (a value that does not fit its column's type): the
    job fails, and runners do not retry the container (its restart would fail on the same message). The
    message names the stream, the task and, where there is one, the column and the value."""


BAD_MESSAGE_MARK = f"{BadMessageError.__name__}: "
"""Where a container's one-line error (``<error class>: <message>``) says a bad message failed it."""


def is_bad_message(error: BaseException | None) -> bool:
    """True when ``error`` or an error it was caused by is a :class:`BadMessageError`."""
    seen = 0
    while error is not None and seen < 20:
        if isinstance(error, BadMessageError):
            return True
        error, seen = error.__cause__, seen + 1
    return False


class CheckpointError(SamzaError):
    """Checkpoints could not be read or written, or a checkpoint store is corrupt or foreign."""


class ContainerStateError(SamzaError):
    """A container was used out of its lifecycle order (started twice, run after stop)."""


class JobTimeoutError(SamzaError):
    """A job did not finish within the time it was given."""


class StreamInUseError(SamzaError):
    """A stream cannot be recreated while a running job reads it; the message names the stream and the
    job. A mistake of the caller, told in one line (a notebook shows it without a traceback)."""


class JobRunningError(SamzaError):
    """The job (its ``job.name`` and ``job.id``) already runs: a second driver of it is refused (a job runs
    once; the message names the running driver: host, pid, since), and so is a reset of it (the message names
    the file its run holds)."""


__all__ = [
    "BadMessageError",
    "CallbackError",
    "CheckpointError",
    "ConfigError",
    "ContainerStateError",
    "JobRunningError",
    "JobTimeoutError",
    "SamzaError",
    "StreamInUseError",
    "SystemConsumersError",
    "SystemProducerError",
    "TaskFailedError",
]
