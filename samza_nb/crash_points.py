"""Named crash points: a test-only hook that kills the process (SIGKILL) at an exact moment.

Recovery is tested at named moments, not at random times: ``SAMZA_NB_CRASH_POINT=<name>`` kills the process
the first time it reaches the point ``<name>``; ``<name>@<n>`` kills it the ``n``-th time. Before dying the
process writes one line to its standard error, ``samza_nb crash point <name> reached (<n>)``, so whoever
watches it knows where it died. The variable is read once, at import; a process without it pays one global
lookup per point (call sites test :data:`ARMED` before calling :func:`reached`), nothing more.

With ``SAMZA_NB_CRASH_ONCE=<file>`` as well, only the first process to reach the fatal arrival dies (it
creates ``<file>``; a process that finds it lives on): a container that Spark retries with the same
environment crashes once, not in every attempt.

Every point is declared in :data:`POINTS` with what is true when it is reached; naming a point that is not
declared is an error at import (a misspelt point would otherwise never fire and the test would pass).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from typing import Final, NoReturn

from samza_nb.errors import ConfigError

ENV: Final = "SAMZA_NB_CRASH_POINT"
ONCE_ENV: Final = "SAMZA_NB_CRASH_ONCE"

POINTS: Final[Mapping[str, str]] = {
    # -- one container: the commit sequence (container/container.py, storage/manager.py) ----------------
    "commit.stores-flushed": "the stores' caches are written down and their changelog records handed to "
    "the producers; no producer is flushed, no state or checkpoint written",
    "commit.producers-flushed": "outputs and changelog records are flushed (durable); the state file and "
    "the checkpoint are not written",
    "commit.state-written": "the state file is committed with the offsets it reflects; the checkpoint is "
    "not written",
    "commit.outputs-prepared": "a committing producer (the Spark sink) recorded the commit's output files "
    "as pending; the checkpoint is not written",
    "commit.checkpoint-written": "the checkpoint is written; the loop has not recorded the commit, and a "
    "committing producer's pending output is not yet committed",
    "spark.output-logged": "the Spark sink appended a task's committed files to its streams' "
    "_spark_metadata logs; the task's pending record is not removed",
    "state.mid-transaction": "inside the state file's transaction: the stores' rows are written, the "
    "offsets are not, nothing is committed",
    # -- the durable log (systems/log/) ----------------------------------------------------------------
    "log.append.torn": "half of a batch's bytes are in the segment file (a torn record at its tail)",
    "log.append.before-fsync": "a whole batch is written to the segment file, not fsynced",
    "log.append.after-fsync": "a batch is fsynced; the flush mark that shows it to readers is not written",
    # -- restoring state (storage/restore.py) -----------------------------------------------------------
    "restore.mid": "a store is restoring from its changelog: a batch of records is applied to its pending "
    "writes; nothing of the restore is committed",
    "restore.done": "a task's stores are restored and that state committed with its offsets; no message is "
    "processed yet",
    # -- the task's lifecycle ---------------------------------------------------------------------------
    "task.window-done": "a task's window() returned; its output is not committed",
    "task.end-of-stream-done": "every input of a task ended and its end_of_stream() returned; the final "
    "commit has not run",
    "callbacks.completed": "an async task's callback completed; the checkpoint it allows is not written",
    # -- the coordinator and several containers (coordinator/, runtime/) ---------------------------------
    "coordinator.config-written": "the job's config is in the coordinator stream; no set-changelog or "
    "assignment yet",
    "coordinator.set-changelog-written": "set-changelog messages are written; the job model is not served",
    "coordinator.assignment-written": "the task-to-container assignment is written (a rebalance when the "
    "container count changed); the job model is not served",
    "container.model-fetched": "a container process has its job model; none of its tasks started",
    "container.stopping": "a task made its final commit and is done; the container's other tasks are not",
    # -- intermediate streams and windows (operators/impl/) ------------------------------------------------
    "control.end-of-stream-sent": "a producer task handed end-of-stream for an intermediate stream to its "
    "collector (durable at its next commit); the other producer tasks have not",
    "window.mid-fire": "a window is firing: some of its panes are emitted, not all",
    "window.fired": "every pane of a firing is emitted; the output is not committed",
}
"""Every crash point: its name → what has happened (and what has not) when it is reached."""


def _parse(value: str | None) -> tuple[str | None, int]:
    if value is None or not value.strip():
        return None, 0
    name, _, count = value.strip().partition("@")
    if name not in POINTS:
        raise ConfigError(
            f"{ENV}={value!r}: no crash point named {name!r} (points: {', '.join(sorted(POINTS))})", key=ENV
        )
    try:
        at = int(count) if count else 1
    except ValueError:
        at = 0
    if at < 1:
        raise ConfigError(f"{ENV}={value!r}: the count after @ must be a whole number >= 1", key=ENV)
    return name, at


_NAME, _AT = _parse(os.environ.get(ENV))
_reached = 0

ARMED: Final[bool] = _NAME is not None
"""Whether this process has a crash point armed; call sites test it before calling :func:`reached`."""


def armed_for(name: str) -> bool:
    """Count one arrival at ``name``; True when this arrival is the fatal one. For a point that must do
    something before dying (write half a batch): do it, then call :func:`crash`."""
    global _reached
    if name != _NAME:
        return False
    _reached += 1
    if _reached != _AT:
        return False
    once = os.environ.get(ONCE_ENV)
    if once:
        try:
            os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return False  # another process (an earlier attempt) died here already
    return True


def reached(name: str) -> None:
    """Arrive at the point ``name``: the process dies here when it is the armed point's fatal arrival."""
    if armed_for(name):
        crash(name)


def crash(name: str) -> NoReturn:
    """Say where, then kill this process with SIGKILL (no cleanup, no flush, no atexit: as a power cut
    leaves it, except that what the kernel holds in its page cache survives)."""
    os.write(2, f"samza_nb crash point {name} reached ({_reached})\n".encode())
    os.kill(os.getpid(), signal.SIGKILL)
    raise SystemExit(137)  # not reached: SIGKILL cannot be caught


__all__ = ["ARMED", "ENV", "ONCE_ENV", "POINTS", "armed_for", "crash", "reached"]
