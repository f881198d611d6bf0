"""The embedded default checkpoint manager: checkpoints in the job's DuckDB file.

The file is ``<job.logged.store.base.dir>/<job.name>-<job.id>/samza.duckdb``. It is meant to be shared with
the job's key-value stores, so that store writes and input offsets can commit in one DuckDB transaction: a
manager can be given an existing connection, exposes its own (:attr:`DuckDBCheckpointManager.connection`),
and :meth:`DuckDBCheckpointManager.write_checkpoint_in` writes a checkpoint inside a transaction the caller
manages.

Schema (all in the database's default schema)::

    samza_nb_meta(key VARCHAR PRIMARY KEY, value VARCHAR)       -- format marker, version, job name/id
    samza_nb_checkpoint_tasks(task_name PRIMARY KEY, written_at_ms BIGINT)  -- tasks that have a checkpoint
    samza_nb_checkpoints(task_name, system, stream, partition, "offset")   -- input offsets
    samza_nb_changelog_offsets(task_name, store_name, "offset")            -- store changelog offsets

A file that is not a DuckDB database, a DuckDB database holding other tables but no samza_nb marker, or a
marker of another format, version or job is refused with :class:`CheckpointError` naming the file; such a
file is never modified. DuckDB lets one process open a file for writing; a second process gets a
CheckpointError saying the file is in use. (Within one process, DuckDB shares one database instance between
connections to the same file, so several managers in one process can use the same file.)
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint.checkpoint import Checkpoint
from samza_nb.errors import CheckpointError, ConfigError

if TYPE_CHECKING:
    from samza_nb.config.config import Config

FORMAT_MARKER: Final[str] = "samza_nb-checkpoints"
"""Value of the ``format`` key in ``samza_nb_meta`` that identifies a samza_nb job database."""

FORMAT_VERSION: Final[str] = "1"
"""Value of the ``version`` key in ``samza_nb_meta`` that this code reads and writes."""

DATABASE_FILE_NAME: Final[str] = "samza.duckdb"
"""File name of the job database inside ``<job.logged.store.base.dir>/<job.name>-<job.id>/``."""

IN_MEMORY: Final[str] = ":memory:"
"""Pass as ``path`` for a private in-memory database (nothing survives the manager; for tests)."""

META_TABLE: Final[str] = "samza_nb_meta"
TASKS_TABLE: Final[str] = "samza_nb_checkpoint_tasks"
OFFSETS_TABLE: Final[str] = "samza_nb_checkpoints"
CHANGELOG_TABLE: Final[str] = "samza_nb_changelog_offsets"

_SCHEMA: Final[tuple[str, ...]] = (
    f"CREATE TABLE IF NOT EXISTS {META_TABLE} (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {TASKS_TABLE} ("
    "task_name VARCHAR PRIMARY KEY, written_at_ms BIGINT NOT NULL)",
    f"CREATE TABLE IF NOT EXISTS {OFFSETS_TABLE} ("
    "task_name VARCHAR NOT NULL, system VARCHAR NOT NULL, stream VARCHAR NOT NULL, "
    'partition INTEGER NOT NULL, "offset" VARCHAR NOT NULL, '
    "PRIMARY KEY (task_name, system, stream, partition))",
    f"CREATE TABLE IF NOT EXISTS {CHANGELOG_TABLE} ("
    'task_name VARCHAR NOT NULL, store_name VARCHAR NOT NULL, "offset" VARCHAR NOT NULL, '
    "PRIMARY KEY (task_name, store_name))",
)
_REQUIRED_TABLES: Final[frozenset[str]] = frozenset({META_TABLE, TASKS_TABLE, OFFSETS_TABLE, CHANGELOG_TABLE})

_NEW, _STARTED, _STOPPED = "new", "started", "stopped"


def job_database_path(config: Config) -> Path:
    """The absolute path of the job's DuckDB file.

    It is ``<job.logged.store.base.dir>/<job.name>-<job.id>/samza.duckdb``.

    ``job.name`` and ``job.id`` must be usable as one directory name (no path separators, not ``.`` or
    ``..``); otherwise a :class:`ConfigError` names the key.
    """
    base = config.get_str("job.logged.store.base.dir", "./.samza_nb/state")
    job_name, job_id = _job_identity(config)
    return (Path(base).expanduser() / f"{job_name}-{job_id}" / DATABASE_FILE_NAME).absolute()


def _job_identity(config: Config) -> tuple[str, str]:
    values: list[str] = []
    for key, default in (("job.name", "samza-nb-job"), ("job.id", "1")):
        value = config.get_str(key, default).strip()
        if not value or value in {".", ".."} or "/" in value or "\\" in value or os.sep in value:
            raise ConfigError(
                f"{key}={value!r} cannot name the job's state directory: it must be non-empty and "
                "contain no path separator",
                key=key,
            )
        values.append(value)
    return values[0], values[1]


def ensure_schema(conn: duckdb.DuckDBPyConnection, path: str, job_name: str, job_id: str) -> None:
    """Make sure the database behind ``conn`` is this job's samza_nb database, creating it if empty.

    An empty database gets the schema and the marker (format, version, job name and id) in one
    transaction. An existing one must carry the marker of this format, version and job, and all the
    tables; otherwise :class:`CheckpointError` (naming ``path``) is raised and nothing is changed.
    Anything else sharing the file (the job's stores) should call this before creating its own tables.
    ``conn`` must not be inside a transaction.
    """
    if not _table_names(conn, path):
        try:
            conn.begin()
            try:
                for statement in _SCHEMA:
                    conn.execute(statement)
                conn.executemany(
                    f"INSERT OR IGNORE INTO {META_TABLE} (key, value) VALUES (?, ?)",
                    [
                        ("format", FORMAT_MARKER),
                        ("version", FORMAT_VERSION),
                        ("job.name", job_name),
                        ("job.id", job_id),
                        ("created_at_ms", str(_now_ms())),
                    ],
                )
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
        except duckdb.Error as exc:
            raise CheckpointError(f"checkpoint file {path}: could not create the schema: {exc}") from exc
    _validate(conn, path, job_name, job_id)


def _table_names(conn: duckdb.DuckDBPyConnection, path: str) -> set[str]:
    try:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_catalog = current_database() AND table_schema = current_schema()"
        ).fetchall()
    except duckdb.Error as exc:
        raise CheckpointError(f"checkpoint file {path}: could not list its tables: {exc}") from exc
    return {str(row[0]) for row in rows}


def _validate(conn: duckdb.DuckDBPyConnection, path: str, job_name: str, job_id: str) -> None:
    tables = _table_names(conn, path)
    if META_TABLE not in tables:
        listed = ", ".join(sorted(tables)[:10]) + (", ..." if len(tables) > 10 else "")
        raise CheckpointError(
            f"checkpoint file {path} is a DuckDB database without the samza_nb marker (tables: {listed}); "
            "it belongs to something else, so it is neither used nor overwritten. Point "
            "job.logged.store.base.dir elsewhere or move the file away."
        )
    try:
        rows = conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall()
    except duckdb.Error as exc:
        raise CheckpointError(
            f"checkpoint file {path}: table {META_TABLE} is not samza_nb's ({exc}); refusing to use the file"
        ) from exc
    meta = {str(key): str(value) for key, value in rows}
    found_format = meta.get("format")
    if found_format != FORMAT_MARKER:
        raise CheckpointError(
            f"checkpoint file {path} has format marker {found_format!r}, expected {FORMAT_MARKER!r}; "
            "it is not a samza_nb checkpoint file, so it is neither used nor overwritten"
        )
    found_version = meta.get("version")
    if found_version != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint file {path} has format version {found_version!r}, but this samza_nb reads and "
            f"writes version {FORMAT_VERSION!r}; refusing to use it"
        )
    found_job = (meta.get("job.name"), meta.get("job.id"))
    if found_job != (job_name, job_id):
        raise CheckpointError(
            f"checkpoint file {path} belongs to job.name={found_job[0]!r} job.id={found_job[1]!r}, "
            f"not to job.name={job_name!r} job.id={job_id!r}; refusing to use another job's checkpoints"
        )
    missing = _REQUIRED_TABLES - tables
    if missing:
        raise CheckpointError(
            f"checkpoint file {path} is damaged: samza_nb tables {', '.join(sorted(missing))} are missing"
        )


def _now_ms() -> int:
    return int(time.time() * 1000)


def _open(path: str) -> duckdb.DuckDBPyConnection:
    """Connect to the DuckDB file at ``path``, translating DuckDB's failures into CheckpointError."""
    if path != IN_MEMORY:
        target = Path(path)
        if target.exists() and not target.is_file():
            raise CheckpointError(f"checkpoint file {path} exists but is not a regular file")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"checkpoint file {path}: cannot create its directory: {exc}") from exc
    try:
        return duckdb.connect(path)
    except duckdb.Error as exc:
        text = str(exc)
        lowered = text.lower()
        if "lock" in lowered and ("conflicting" in lowered or "could not set" in lowered):
            raise CheckpointError(
                f"checkpoint file {path} is in use by another process (DuckDB allows one writer "
                f"process per file; is the same job already running?): {text}"
            ) from exc
        if "not a valid duckdb database" in lowered:
            raise CheckpointError(
                f"checkpoint file {path} is not a DuckDB database (corrupt or a different kind of file); "
                "it is neither used nor overwritten. Move it away to start without checkpoints."
            ) from exc
        raise CheckpointError(f"checkpoint file {path} could not be opened: {text}") from exc


class DuckDBCheckpointManager:
    """Checkpoints of a job's tasks in a DuckDB file; they survive restarts of the process.

    ``path`` is the database file (created with its directory on :meth:`start` if absent) or
    :data:`IN_MEMORY`. With ``connection``, the manager uses that open DuckDB connection (to the database
    at ``path``) instead of opening the file, works on its own cursor of it, and does not close it on
    :meth:`stop`; the caller stays the owner.

    Promises: :meth:`start` validates the file (see the module doc) and raises CheckpointError naming the
    path when it is corrupt, foreign, of another job or version, or in use by another process. Each
    :meth:`write_checkpoint` replaces the task's whole checkpoint in one committed transaction, durable when
    it returns. :meth:`read_last_checkpoint` returns exactly what was last written, or None. Any use before
    ``start`` or after ``stop`` raises CheckpointError. Calls are blocking but short (a few ms each).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        job_name: str = "samza-nb-job",
        job_id: str = "1",
        *,
        connection: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        raw = os.fspath(path)
        self._path = raw if raw == IN_MEMORY else str(Path(raw).expanduser().absolute())
        self._job_name = job_name
        self._job_id = job_id
        self._given = connection
        self._conn: duckdb.DuckDBPyConnection | None = None
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
        same database; a transaction on such a cursor can include :meth:`write_checkpoint_in`.
        """
        return self._require_started("connection")

    # -- lifecycle -------------------------------------------------------------------------------------
    def register(self, task_name: str) -> None:
        """Announce a task (before :meth:`start`); registering a name twice is harmless."""
        _check_task_name(task_name)
        if self._state == _STOPPED:
            raise CheckpointError(f"cannot register task {task_name!r}: checkpoint manager {self} is stopped")
        if task_name not in self._tasks:
            self._tasks.append(task_name)

    async def start(self) -> None:
        """Open (or create) and validate the file; CheckpointError if it is unusable. Starts only once."""
        self.start_sync()

    def start_sync(self) -> None:
        """The blocking body of :meth:`start`, for callers outside an event loop."""
        with self._lock:
            if self._state == _STARTED:
                raise CheckpointError(f"checkpoint manager {self} is already started")
            if self._state == _STOPPED:
                raise CheckpointError(f"checkpoint manager {self} was stopped; create a new one")
            if self._given is not None:
                try:
                    conn = self._given.cursor()
                except duckdb.Error as exc:
                    raise CheckpointError(
                        f"checkpoint file {self._path}: the given connection is unusable: {exc}"
                    ) from exc
            else:
                conn = _open(self._path)
            try:
                ensure_schema(conn, self._path, self._job_name, self._job_id)
            except BaseException:
                conn.close()
                raise
            self._conn = conn
            self._state = _STARTED

    async def stop(self) -> None:
        """Close the manager's connection (releasing the file if it opened it). Idempotent."""
        self.stop_sync()

    def stop_sync(self) -> None:
        """The blocking body of :meth:`stop`."""
        with self._lock:
            conn, self._conn = self._conn, None
            self._state = _STOPPED
            if conn is not None:
                try:
                    conn.close()
                except duckdb.Error as exc:
                    raise CheckpointError(f"checkpoint file {self._path}: closing failed: {exc}") from exc

    # -- reads and writes ------------------------------------------------------------------------------
    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        """The last checkpoint written for ``task_name``, or None if it never had one."""
        return self.read_last_checkpoint_sync(task_name)

    def read_last_checkpoint_sync(self, task_name: str) -> Checkpoint | None:
        """The blocking body of :meth:`read_last_checkpoint`."""
        _check_task_name(task_name)
        with self._lock:
            conn = self._require_started("read_last_checkpoint")
            try:
                conn.begin()  # one snapshot for the three reads
                try:
                    known = conn.execute(
                        f"SELECT 1 FROM {TASKS_TABLE} WHERE task_name = ?", [task_name]
                    ).fetchone()
                    offsets = conn.execute(
                        f'SELECT system, stream, partition, "offset" FROM {OFFSETS_TABLE} '
                        "WHERE task_name = ?",
                        [task_name],
                    ).fetchall()
                    changelog = conn.execute(
                        f'SELECT store_name, "offset" FROM {CHANGELOG_TABLE} WHERE task_name = ?',
                        [task_name],
                    ).fetchall()
                finally:
                    conn.rollback()
            except duckdb.Error as exc:
                raise CheckpointError(
                    f"checkpoint file {self._path}: reading the checkpoint of task {task_name!r} "
                    f"failed: {exc}"
                ) from exc
        if known is None:
            return None
        return Checkpoint(
            {SystemStreamPartition(str(s), str(t), int(p)): str(o) for s, t, p, o in offsets},
            {str(store): str(offset) for store, offset in changelog},
        )

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Replace ``task_name``'s checkpoint in one committed transaction; durable when this returns."""
        self.write_checkpoint_sync(task_name, checkpoint)

    def write_checkpoint_sync(self, task_name: str, checkpoint: Checkpoint) -> None:
        """The blocking body of :meth:`write_checkpoint`."""
        with self._lock:
            conn = self._require_started("write_checkpoint")
            try:
                conn.begin()
            except duckdb.Error as exc:
                raise CheckpointError(
                    f"checkpoint file {self._path}: could not begin a transaction: {exc}"
                ) from exc
            try:
                self.write_checkpoint_in(conn, task_name, checkpoint)
                conn.commit()
            except BaseException as exc:
                # If the commit itself failed, DuckDB may already have ended the transaction.
                with contextlib.suppress(duckdb.Error):
                    conn.rollback()
                if isinstance(exc, duckdb.Error):
                    raise CheckpointError(
                        f"checkpoint file {self._path}: committing the checkpoint of task {task_name!r} "
                        f"failed: {exc}"
                    ) from exc
                raise

    def write_checkpoint_in(
        self, conn: duckdb.DuckDBPyConnection, task_name: str, checkpoint: Checkpoint
    ) -> None:
        """Replace ``task_name``'s checkpoint within the transaction the caller has open on ``conn``.

        ``conn`` must be a connection (or cursor) to this manager's database, inside a transaction the
        caller began; the caller commits (making store writes and offsets durable together) or rolls back
        (leaving the previous checkpoint). Nothing is committed here. CheckpointError on failure.
        """
        _check_task_name(task_name)
        if not isinstance(checkpoint, Checkpoint):
            raise CheckpointError(
                f"write_checkpoint of task {task_name!r} needs a Checkpoint, got {checkpoint!r}"
            )
        with self._lock:
            self._require_started("write_checkpoint_in")
            try:
                for table in (OFFSETS_TABLE, CHANGELOG_TABLE, TASKS_TABLE):
                    conn.execute(f"DELETE FROM {table} WHERE task_name = ?", [task_name])
                conn.execute(f"INSERT INTO {TASKS_TABLE} VALUES (?, ?)", [task_name, _now_ms()])
                offsets = checkpoint.offsets
                if offsets:
                    conn.execute(
                        f"INSERT INTO {OFFSETS_TABLE} VALUES "
                        + ", ".join(["(?, ?, ?, ?, ?)"] * len(offsets)),
                        [
                            value
                            for ssp, offset in offsets.items()
                            for value in (task_name, ssp.system, ssp.stream, ssp.partition, offset)
                        ],
                    )
                changelog = checkpoint.changelog_offsets
                if changelog:
                    conn.execute(
                        f"INSERT INTO {CHANGELOG_TABLE} VALUES " + ", ".join(["(?, ?, ?)"] * len(changelog)),
                        [
                            value
                            for store, offset in changelog.items()
                            for value in (task_name, store, offset)
                        ],
                    )
            except duckdb.Error as exc:
                raise CheckpointError(
                    f"checkpoint file {self._path}: writing the checkpoint of task {task_name!r} "
                    f"failed: {exc}"
                ) from exc

    # -- helpers ---------------------------------------------------------------------------------------
    def _require_started(self, what: str) -> duckdb.DuckDBPyConnection:
        if self._state == _NEW:
            raise CheckpointError(f"{what} called before start() on checkpoint manager {self}")
        if self._state == _STOPPED or self._conn is None:
            raise CheckpointError(f"{what} called after stop() on checkpoint manager {self}")
        return self._conn

    def __repr__(self) -> str:
        return (
            f"DuckDBCheckpointManager({self._path!r}, job_name={self._job_name!r}, "
            f"job_id={self._job_id!r}, state={self._state})"
        )

    def __str__(self) -> str:
        return f"for {self._path} ({self._state})"


class DuckDBCheckpointManagerFactory:
    """The default ``task.checkpoint.factory``: a :class:`DuckDBCheckpointManager` on the job's file.

    The file is :func:`job_database_path` of the config; the job name and id are recorded in the file and
    checked on every start.
    """

    def get_checkpoint_manager(self, config: Config) -> DuckDBCheckpointManager:
        """A new, unstarted manager for ``<job.logged.store.base.dir>/<job.name>-<job.id>/samza.duckdb``."""
        job_name, job_id = _job_identity(config)
        return DuckDBCheckpointManager(job_database_path(config), job_name, job_id)


def _check_task_name(task_name: object) -> None:
    if not isinstance(task_name, str) or not task_name:
        raise CheckpointError(f"a task name must be a non-empty string, got {task_name!r}")


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
