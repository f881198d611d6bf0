"""What the Spark runner says when its containers' Spark job fails: one line, and whether it is the job's
config (a :class:`~samza_nb.errors.ConfigError`) or a failure of the run (docs/architecture.md §10).

The lines come from the containers (``container <id> failed: <its last error line> (<how it exited>)``,
:mod:`.task`), from a worker without samza_nb or without the shared directory (one line naming the fix), from
a bad message a container's report carries (not retried), or, for anything else, the first line of Spark's
error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from samza_nb.errors import BAD_MESSAGE_MARK, ConfigError, SamzaError
from samza_nb.runtime.spark.probes import shared_dir_error
from samza_nb.runtime.spark.task import FAILED_MARK, starting_over_streams
from samza_nb.systems.spark.session import worker_python_error

if TYPE_CHECKING:
    from samza_nb.api.job_model import JobModel
    from samza_nb.config import Config
    from samza_nb.coordinator.job_coordinator import JobCoordinator

CONFIG_EXIT = "(exited with status 2)"
"""How a container that refused the job's config ends (exit status 2): the job's error is a ConfigError."""


@dataclass(frozen=True)
class JobFailure:
    """How the containers' Spark job ended with an error: ``line`` (None: it was this runner's own stop)
    and the kind of error the runner raises with it."""

    line: str | None
    kind: type[SamzaError] = SamzaError


def job_failure(exc: BaseException, *, stop_requested: bool, cancelled: bool) -> JobFailure:
    """What the Spark job's error ``exc`` means: a worker without samza_nb or without the shared directory
    (a ConfigError line), the last failed container's line, nothing when the runner stopped the job itself
    (``stop_requested``, and it ``cancelled`` the job group or no container failed), else Spark's first
    line."""
    text = str(exc)
    missing = worker_python_error(text) or shared_dir_error(text)
    if missing is not None:
        return JobFailure(str(missing), ConfigError)
    found = re.findall(rf"container \S+ {FAILED_MARK}[^\n]*", text)
    if stop_requested and (cancelled or not found):
        return JobFailure(None)
    if found:
        line = found[-1].strip()
    else:
        line = next((part.strip() for part in text.splitlines() if part.strip()), type(exc).__name__)
        line = f"the Spark job of the containers failed: {line}"
    return JobFailure(line, ConfigError if line.endswith(CONFIG_EXIT) else SamzaError)


def bad_message(coordinator: JobCoordinator) -> str | None:
    """The line of the first container a bad message failed (it is not retried), if any."""
    for report in coordinator.job_status().failed():
        if report.error is not None and BAD_MESSAGE_MARK in report.error:
            return f"container {report.container_id} {FAILED_MARK}{report.error}"
    return None


def retry_refusal(config: Config, model: JobModel) -> str | None:
    """Why a retried container of this run must not run (its tasks start over with ``reset.offset``: a
    retry would start them over again, apart from the other containers' output generation); None when the
    job starts no task over."""
    resetting = starting_over_streams(config, model)
    if not resetting:
        return None
    return (
        f"it was retried while the job resets {', '.join(resetting)} (reset.offset): a retry would start "
        "its tasks over again, apart from the other containers' output; run the job again without "
        "reset.offset (it resumes from the checkpoints this run wrote)"
    )


__all__ = ["CONFIG_EXIT", "JobFailure", "bad_message", "job_failure", "retry_refusal"]
