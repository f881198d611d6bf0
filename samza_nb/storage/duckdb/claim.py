"""Claiming a job database that does not exist yet: one process writes it, refused to the others at start.

While a process has one of the job's DuckDB files open for writing, DuckDB's lock on the file refuses any
other process. A checkpoint manager that finds no checkpoint file when it starts creates it only when it
first writes (a job's start then needs no DuckDB); until then it holds a claim on the file's directory, an
exclusive ``flock`` of it, which refuses another process claiming it with the same error DuckDB's lock gives
(:func:`~.open_errors.in_use_error`). So a second run of the same job is refused when it starts, whether or
not the first one has created the file yet. The claim ends when the manager has the file open (DuckDB's lock
takes over) or stops, or with the process; a forked child does not inherit it (nor does it DuckDB's lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading

from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb.open_errors import in_use_error

_lock = threading.Lock()
_claimed: dict[str, DirectoryClaim] = {}  # directory -> this process's claim of it


class DirectoryClaim:
    """The claim on the directory of the job database at :attr:`path`, held until :meth:`release`."""

    def __init__(self, path: str, directory: str, descriptor: int) -> None:
        self.path = path
        """The job database the claim is for."""
        self._directory = directory
        self._descriptor: int | None = descriptor

    def release(self) -> None:
        """End the claim (idempotent)."""
        with _lock:
            descriptor, self._descriptor = self._descriptor, None
            if descriptor is None:
                return
            del _claimed[self._directory]
        os.close(descriptor)  # (closing the descriptor ends its flock)


def claim_directory(path: str) -> DirectoryClaim:
    """Create the directory of the job database at ``path`` (as opening the file for writing would) and
    claim it. A claim held by another process is refused with :func:`~.open_errors.in_use_error`'s
    CheckpointError, one held in this process with a CheckpointError saying so; a directory that cannot be
    created or claimed, with a CheckpointError naming the file and why."""
    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as exc:
        raise CheckpointError(f"job database {path}: cannot create its directory: {exc}") from exc
    with _lock:
        if directory in _claimed:
            raise CheckpointError(
                f"job database {path} is already open in this process (a running job of the same job.name "
                "and job.id?): wait for it to stop, or run this one with another job.id"
            )
        try:
            descriptor = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise CheckpointError(f"job database {path}: cannot open its directory: {exc}") from exc
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise in_use_error(path) from None
        except OSError as exc:
            os.close(descriptor)
            raise CheckpointError(f"job database {path}: cannot lock its directory: {exc}") from exc
        claim = _claimed[directory] = DirectoryClaim(path, directory, descriptor)
    return claim


def _after_fork_in_child() -> None:
    """A forked child closes its copies of the parent's claims: the parent's claims stay the parent's
    (a flock lasts while any copy of its descriptor is open)."""
    global _lock
    _lock = threading.Lock()  # (another thread may have held it at the fork)
    for claim in _claimed.values():
        descriptor, claim._descriptor = claim._descriptor, None
        if descriptor is not None:
            with contextlib.suppress(OSError):
                os.close(descriptor)
    _claimed.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)


__all__ = ["DirectoryClaim", "claim_directory"]
