"""The embedded default checkpoint manager: checkpoints in the job's DuckDB file.

The file is ``<job.logged.store.base.dir>/<job.name>-<job.id>/samza.duckdb``; its format (and the refusal of
corrupt, foreign, other-version or other-job files, and of a file in use by another process) is
:mod:`samza_nb.storage.duckdb.job_files`'s, shared with the job's state files. A manager can be given an
existing connection, exposes its own (:attr:`DuckDBCheckpointManager.connection`), and
:meth:`DuckDBCheckpointManager.write_checkpoint_in` writes a checkpoint inside a transaction the caller
manages, so that other writes to the same file can commit with it.

A job without a checkpoint file yet starts without DuckDB: the manager claims the file's directory (another
process is refused as DuckDB's lock would refuse it) and creates the file at its first write.
"""

from __future__ import annotations

import os
import threading
from typing import TYPE_CHECKING, Any

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb.claim import DirectoryClaim, claim_directory
from samza_nb.storage.duckdb.paths import (
    DATABASE_FILE_NAME,
    DEFAULT_JOB_ID,
    DEFAULT_JOB_NAME,
    IN_MEMORY,
    absolute_path,
    job_database_path,
    job_identity,
)

if TYPE_CHECKING:
    import duckdb

    from samza_nb.config.config import Config
    from samza_nb.storage.duckdb.job_files import FORMAT_MARKER, FORMAT_VERSION, ensure_schema
    from samza_nb.storage.duckdb.state_file import StateFile

_NEW, _STARTED, _STOPPED = "new", "started", "stopped"
_FORMAT_NAMES = frozenset({"FORMAT_MARKER", "FORMAT_VERSION", "ensure_schema"})


class DuckDBCheckpointManager:
    """Checkpoints of a job's tasks in a DuckDB file; they survive restarts of the process.

    ``path`` is the database file (created with its directory if absent) or :data:`IN_MEMORY`. With
    ``connection``, the manager uses that open DuckDB connection (to the database at ``path``) instead of
    opening the file, works on its own cursor of it, and does not close it on :meth:`stop`; the caller stays
    the owner.

    Promises: :meth:`start` validates an existing file (see the module doc) and raises CheckpointError
    naming the path when it is corrupt, foreign, of another job or version, or in use by another process.
    When there is no file yet, :meth:`start` claims its directory instead (CheckpointError naming the path
    when another process holds the job's file or claim, or the directory cannot be created) and the file is
    created, as :meth:`start` would create it, by the first :meth:`write_checkpoint` (or the first use of
    :attr:`connection`); until then every :meth:`read_last_checkpoint` is None and DuckDB is not loaded.
    Each :meth:`write_checkpoint` replaces the task's whole checkpoint in one committed transaction, durable
    when it returns. :meth:`read_last_checkpoint` returns exactly what was last written, or None. Any use
    before ``start`` or after ``stop`` raises CheckpointError. Calls are blocking but short (a few ms each;
    the one that creates the file, tens of ms).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        job_name: str = DEFAULT_JOB_NAME,
        job_id: str = DEFAULT_JOB_ID,
        *,
        connection: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        self._path = absolute_path(path)
        self._job_name = job_name
        self._job_id = job_id
        self._given = connection
        self._file: StateFile | None = None  # open (from start, or from the first write when it was absent)
        self._claim: DirectoryClaim | None = None  # held from start while the file does not exist
        self._state = _NEW
        self._tasks: list[str] = []
        self._lock = threading.RLock()

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def path(self) -> str:
        """The absolute path of the database file (or ``":memory:"``)."""
        return self._path

    @property
    def job_name(self) -> str:
        """The job name recorded in, and required of, the file."""
        return self._job_name

    @property
    def job_id(self) -> str:
        """The job id recorded in, and required of, the file."""
        return self._job_id

    @property
    def registered_tasks(self) -> tuple[str, ...]:
        """The task names given to :meth:`register`, in registration order."""
        return tuple(self._tasks)

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The manager's open connection to the job database (between start and stop).

        Other components sharing the file may call ``.cursor()`` on it to get their own connection to the
        same database; a transaction on such a cursor can include :meth:`write_checkpoint_in`. What they do
        to the DuckDB instance (functions, global settings) ends with it: the instance is not reused.
        """
        from samza_nb.storage.duckdb.job_files import hand_out

        with self._lock:
            self._require_started("connection")
            return hand_out(self._open_file().connection)

    # -- lifecycle -------------------------------------------------------------------------------------
    def register(self, task_name: str) -> None:
        """Announce a task (before :meth:`start`); registering a name twice is harmless."""
        _check_task_name(task_name)
        if self._state == _STOPPED:
            raise CheckpointError(f"cannot register task {task_name!r}: checkpoint manager {self} is stopped")
        if task_name not in self._tasks:
            self._tasks.append(task_name)

    async def start(self) -> None:
        """Open (or create) and validate the file, or claim it when it does not exist yet (see the class);
        CheckpointError if it is unusable. Starts only once."""
        self.start_sync()

    def start_sync(self) -> None:
        """The blocking body of :meth:`start`, for callers outside an event loop."""
        with self._lock:
            if self._state == _STARTED:
                raise CheckpointError(f"checkpoint manager {self} is already started")
            if self._state == _STOPPED:
                raise CheckpointError(f"checkpoint manager {self} was stopped; create a new one")
            if self._given is None and self._path != IN_MEMORY and not os.path.exists(self._path):
                claim = claim_directory(self._path)
                if os.path.exists(self._path):  # created meanwhile: its writer holds DuckDB's lock
                    claim.release()
                    self._open_file()
                else:
                    self._claim = claim
            else:
                self._open_file()
            self._state = _STARTED

    async def stop(self) -> None:
        """Close the manager's connection (releasing the file if it opened it). Idempotent."""
        self.stop_sync()

    def stop_sync(self) -> None:
        """The blocking body of :meth:`stop`."""
        with self._lock:
            self._state = _STOPPED
            file, self._file = self._file, None
            claim, self._claim = self._claim, None
            try:
                if file is not None:
                    file.close()
            finally:
                if claim is not None:
                    claim.release()

    # -- reads and writes ------------------------------------------------------------------------------
    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        """The last checkpoint written for ``task_name``, or None if it never had one."""
        return self.read_last_checkpoint_sync(task_name)

    def read_last_checkpoint_sync(self, task_name: str) -> Checkpoint | None:
        """The blocking body of :meth:`read_last_checkpoint`."""
        _check_task_name(task_name)
        with self._lock:
            self._require_started("read_last_checkpoint")
            file = self._file
            if file is None:
                if not os.path.exists(self._path):  # (the claim keeps other writers out)
                    return None
                file = self._open_file()
            offsets = file.read_offsets(task_name)
        return None if offsets is None else Checkpoint(offsets.offsets, offsets.changelog_offsets)

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Replace ``task_name``'s checkpoint in one committed transaction; durable when this returns."""
        self.write_checkpoint_sync(task_name, checkpoint)

    def write_checkpoint_sync(self, task_name: str, checkpoint: Checkpoint) -> None:
        """The blocking body of :meth:`write_checkpoint`."""
        _check_checkpoint(task_name, checkpoint)
        with self._lock:
            self._require_started("write_checkpoint")
            with self._open_file().transaction() as tx:
                tx.write_offsets(task_name, checkpoint.offsets, checkpoint.changelog_offsets)

    async def forget_all(self) -> list[str]:
        """Delete every task's checkpoint in one committed transaction (a reset); the tasks that had one."""
        with self._lock:
            self._require_started("forget_all")
            if self._file is None and not os.path.exists(self._path):
                return []
            with self._open_file().transaction() as tx:
                return tx.forget_offsets()

    def write_checkpoint_in(
        self, conn: duckdb.DuckDBPyConnection, task_name: str, checkpoint: Checkpoint
    ) -> None:
        """Replace ``task_name``'s checkpoint within the transaction the caller has open on ``conn``.

        ``conn`` must be a connection (or cursor) to this manager's database, inside a transaction the
        caller began; the caller commits (making store writes and offsets durable together) or rolls back
        (leaving the previous checkpoint). Nothing is committed here. CheckpointError on failure.
        """
        from samza_nb.storage.duckdb.state_file import write_offsets

        _check_checkpoint(task_name, checkpoint)
        with self._lock:
            self._require_started("write_checkpoint_in")
            write_offsets(conn, self.path, task_name, checkpoint.offsets, checkpoint.changelog_offsets)

    # -- helpers ---------------------------------------------------------------------------------------
    def _require_started(self, what: str) -> None:
        if self._state == _NEW:
            raise CheckpointError(f"{what} called before start() on checkpoint manager {self}")
        if self._state == _STOPPED:
            raise CheckpointError(f"{what} called after stop() on checkpoint manager {self}")

    def _open_file(self) -> StateFile:
        """The open file; opened (created when absent, validated) on first need. Under ``self._lock``."""
        if self._file is not None:
            return self._file
        from samza_nb.storage.duckdb.state_file import StateFile

        file = StateFile(self._path, self._job_name, self._job_id, connection=self._given)
        file.open()
        self._file = file
        claim, self._claim = self._claim, None
        if claim is not None:
            claim.release()  # DuckDB's lock on the file keeps other writers out from now on
        return file

    def __repr__(self) -> str:
        return (
            f"DuckDBCheckpointManager({self.path!r}, job_name={self.job_name!r}, "
            f"job_id={self.job_id!r}, state={self._state})"
        )

    def __str__(self) -> str:
        return f"for {self.path} ({self._state})"


class DuckDBCheckpointManagerFactory:
    """The default ``task.checkpoint.factory``: a :class:`DuckDBCheckpointManager` on the job's file.

    The file is :func:`job_database_path` of the config; the job name and id are recorded in the file and
    checked on every start.
    """

    def get_checkpoint_manager(self, config: Config) -> DuckDBCheckpointManager:
        """A new, unstarted manager for ``<job.logged.store.base.dir>/<job.name>-<job.id>/samza.duckdb``."""
        job_name, job_id = job_identity(config)
        return DuckDBCheckpointManager(job_database_path(config), job_name, job_id)


def __getattr__(name: str) -> Any:
    """The file format's names, also exported here, loaded with DuckDB when first asked for."""
    if name in _FORMAT_NAMES:
        from samza_nb.storage.duckdb import job_files

        return getattr(job_files, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_task_name(task_name: object) -> None:
    if not isinstance(task_name, str) or not task_name:
        raise CheckpointError(f"a task name must be a non-empty string, got {task_name!r}")


def _check_checkpoint(task_name: str, checkpoint: object) -> None:
    _check_task_name(task_name)
    if not isinstance(checkpoint, Checkpoint):
        raise CheckpointError(
            f"write_checkpoint of task {task_name!r} needs a Checkpoint, got {checkpoint!r}"
        )


__all__ = [
    "DATABASE_FILE_NAME",
    "FORMAT_MARKER",
    "FORMAT_VERSION",
    "IN_MEMORY",
    "DuckDBCheckpointManager",
    "DuckDBCheckpointManagerFactory",
    "ensure_schema",
    "job_database_path",
]
