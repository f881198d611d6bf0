"""StateFile: one of the job's DuckDB files, and the transaction that commits store writes with offsets.

Store writes and the offsets they reflect are made durable together: ::

    with state_file.transaction() as tx:
        for engine in engines:
            tx.write_store(engine)
        tx.write_offsets(task_name, offsets, changelog_offsets)

On leaving the block without an error, everything written is committed at once and the engines learn that
their writes are committed. On an error (in the block or in the commit) nothing of it is committed, and the
engines keep their writes pending, so a later commit writes them again.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb.file_modes import drop_world_write
from samza_nb.storage.duckdb.job_files import (
    CHANGELOG_TABLE,
    IN_MEMORY,
    OFFSETS_TABLE,
    TASKS_TABLE,
    close_database,
    ensure_schema,
    now_ms,
    open_database,
)
from samza_nb.storage.duckdb.open_errors import check_complete, open_error, use_error
from samza_nb.storage.engine import StorageEngine


@dataclass(frozen=True)
class TaskOffsets:
    """The offsets a task's state reflects: input offsets and, per store, its changelog offset."""

    offsets: Mapping[SystemStreamPartition, str] = field(default_factory=dict)
    changelog_offsets: Mapping[str, str] = field(default_factory=dict)


class StateFile:
    """One samza_nb job database file (the checkpoint file or a task partition's state file).

    ``path`` is the file (created with its directory by :meth:`open` if absent) or :data:`IN_MEMORY`. With
    ``connection``, that open connection to the database at ``path`` is used (through a cursor of its own)
    instead of opening the file, and is not closed by :meth:`close`.

    Promises: :meth:`open` validates the file as this job's (creating the schema in an empty one) and raises
    :class:`CheckpointError` naming the path otherwise. :meth:`read_offsets` returns exactly what the last
    committed :meth:`StateTransaction.write_offsets` wrote for the task, or None. Use outside open → close
    raises CheckpointError. Reads and transactions run on cursors of their own, so threads may share it.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        job_name: str,
        job_id: str,
        *,
        connection: duckdb.DuckDBPyConnection | None = None,
    ) -> None:
        raw = os.fspath(path)
        self._path = raw if raw == IN_MEMORY else str(Path(raw).expanduser().absolute())
        self._job_name = job_name
        self._job_id = job_id
        self._given = connection
        self._conn: duckdb.DuckDBPyConnection | None = None
        self._closed = False
        self._lock = threading.Lock()

    @property
    def path(self) -> str:
        """The absolute path of the file (or ``":memory:"``)."""
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
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The open connection to the file; ``.cursor()`` on it gives another connection to it. For
        samza_nb's components: code outside them gets it through :func:`~.job_files.hand_out`."""
        conn = self._conn
        if conn is None:
            state = "closed" if self._closed else "not open yet"
            raise CheckpointError(f"job database {self._path} is {state}")
        return conn

    def open(self) -> None:
        """Open (or create) and validate the file; CheckpointError naming the path if it is unusable
        (:class:`UnusableStateFileError` when it is truncated, damaged or not a DuckDB file)."""
        with self._lock:
            if self._conn is not None or self._closed:
                raise CheckpointError(f"job database {self._path} was already opened by this StateFile")
            new_database = False
            if self._given is not None:
                try:
                    conn = self._given.cursor()
                except duckdb.Error as exc:
                    raise CheckpointError(
                        f"job database {self._path}: the given connection is unusable: {exc}"
                    ) from exc
            else:
                new_database = self._path == IN_MEMORY or not Path(self._path).exists()
                conn = open_database(self._path)
            try:
                if self._given is None and not new_database:
                    check_complete(conn, self._path)
                ensure_schema(conn, self._path, self._job_name, self._job_id, new_database=new_database)
            except duckdb.Error as exc:  # a damaged block read while checking the file
                with contextlib.suppress(duckdb.Error):
                    close_database(conn)
                raise open_error(self._path, exc) from exc
            except BaseException:
                with contextlib.suppress(duckdb.Error):
                    close_database(conn)
                raise
            self._conn = conn

    def close(self) -> None:
        """Close the connection (releasing the file if this StateFile opened it). Idempotent."""
        with self._lock:
            conn, self._conn = self._conn, None
            self._closed = True
        if conn is not None:
            try:
                close_database(conn)
            except duckdb.Error as exc:
                raise CheckpointError(f"job database {self._path}: closing failed: {exc}") from exc

    def recorded_tasks(self) -> set[str]:
        """The tasks whose offsets the file holds (a file is one task's: its changelog partition's)."""
        cur = self._cursor()
        try:
            rows = cur.execute(f"SELECT task_name FROM {TASKS_TABLE}").fetchall()
        except duckdb.Error as exc:
            raise use_error(self._path, exc, "reading its tasks") from exc
        finally:
            cur.close()
        return {str(row[0]) for row in rows}

    def read_offsets(self, task_name: str) -> TaskOffsets | None:
        """The offsets last committed for ``task_name``, or None if it never had any (one snapshot)."""
        cur = self._cursor()
        try:
            cur.begin()
            try:
                known = cur.execute(
                    f"SELECT 1 FROM {TASKS_TABLE} WHERE task_name = ?", [task_name]
                ).fetchone()
                offsets = cur.execute(
                    f'SELECT system, stream, partition, "offset" FROM {OFFSETS_TABLE} WHERE task_name = ?',
                    [task_name],
                ).fetchall()
                changelog = cur.execute(
                    f'SELECT store_name, "offset" FROM {CHANGELOG_TABLE} WHERE task_name = ?', [task_name]
                ).fetchall()
            finally:
                cur.rollback()
        except duckdb.Error as exc:
            raise use_error(self._path, exc, f"reading the offsets of task {task_name!r}") from exc
        finally:
            cur.close()
        if known is None:
            return None
        return TaskOffsets(
            {SystemStreamPartition(str(s), str(t), int(p)): str(o) for s, t, p, o in offsets},
            {str(store): str(offset) for store, offset in changelog},
        )

    @contextlib.contextmanager
    def transaction(self) -> Iterator[StateTransaction]:
        """A transaction on the file, committed when the block ends without an error (see the module doc).

        Commit failures are :class:`CheckpointError` naming the file; an error of the block propagates
        as it is. Either way nothing of the transaction is committed and its engines keep their writes.
        """
        cur = self._cursor()
        tx = StateTransaction(self, cur)
        try:
            try:
                cur.begin()
            except duckdb.Error as exc:
                raise CheckpointError(
                    f"job database {self._path}: could not begin a transaction: {exc}"
                ) from exc
            try:
                yield tx
                try:
                    cur.commit()
                except duckdb.Error as exc:
                    raise use_error(self._path, exc, "commit") from exc
            except BaseException:
                try:
                    # A failed COMMIT has already ended the transaction: a rollback would then fail and
                    # hide the real error.
                    with contextlib.suppress(duckdb.Error):
                        cur.rollback()
                finally:
                    for engine in tx.engines:
                        engine.discard_pending_failed()
                raise
        finally:
            cur.close()
        for engine in tx.engines:
            engine.mark_committed()
        # DuckDB (re)creates its write-ahead log 0o666 & ~umask: drop the others-write bit (one stat).
        drop_world_write(f"{self._path}.wal")

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        try:
            return self.connection.cursor()
        except duckdb.Error as exc:
            raise CheckpointError(f"job database {self._path}: the connection is unusable: {exc}") from exc

    def __repr__(self) -> str:
        return f"StateFile({self._path!r}, job_name={self._job_name!r}, job_id={self._job_id!r})"


class StateTransaction:
    """The writes of one :meth:`StateFile.transaction`; all of them commit together or none does."""

    def __init__(self, file: StateFile, connection: duckdb.DuckDBPyConnection) -> None:
        self._file = file
        self._conn = connection
        self.engines: list[StorageEngine] = []
        """The engines whose pending writes are part of this transaction."""

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The cursor the transaction runs on (for writes of other tables of the same file)."""
        return self._conn

    def write_store(self, engine: StorageEngine) -> None:
        """Write ``engine``'s pending writes into the transaction."""
        self.engines.append(engine)
        engine.write_pending(self._conn)

    def write_offsets(
        self,
        task_name: str,
        offsets: Mapping[SystemStreamPartition, str],
        changelog_offsets: Mapping[str, str],
    ) -> None:
        """Replace the offsets recorded for ``task_name`` with these."""
        write_offsets(self._conn, self._file.path, task_name, offsets, changelog_offsets)

    def forget_offsets(self) -> list[str]:
        """Delete the offsets of every task (a reset); the tasks that had some."""
        try:
            rows = self._conn.execute(f"SELECT task_name FROM {TASKS_TABLE} ORDER BY task_name").fetchall()
            for table in (OFFSETS_TABLE, CHANGELOG_TABLE, TASKS_TABLE):
                self._conn.execute(f"DELETE FROM {table}")
        except duckdb.Error as exc:
            raise use_error(self._file.path, exc, "deleting the offsets of its tasks") from exc
        return [str(row[0]) for row in rows]


def write_offsets(
    conn: duckdb.DuckDBPyConnection,
    path: str,
    task_name: str,
    offsets: Mapping[SystemStreamPartition, str],
    changelog_offsets: Mapping[str, str],
) -> None:
    """Replace ``task_name``'s offsets within the transaction the caller has open on ``conn`` (a connection
    to the job database at ``path``); nothing is committed here. CheckpointError naming the file on
    failure."""
    try:
        for table in (OFFSETS_TABLE, CHANGELOG_TABLE, TASKS_TABLE):
            conn.execute(f"DELETE FROM {table} WHERE task_name = ?", [task_name])
        conn.execute(f"INSERT INTO {TASKS_TABLE} VALUES (?, ?)", [task_name, now_ms()])
        if offsets:
            conn.execute(
                f"INSERT INTO {OFFSETS_TABLE} VALUES " + ", ".join(["(?, ?, ?, ?, ?)"] * len(offsets)),
                [
                    value
                    for ssp, offset in offsets.items()
                    for value in (task_name, ssp.system, ssp.stream, ssp.partition, offset)
                ],
            )
        if changelog_offsets:
            conn.execute(
                f"INSERT INTO {CHANGELOG_TABLE} VALUES " + ", ".join(["(?, ?, ?)"] * len(changelog_offsets)),
                [
                    value
                    for store, offset in changelog_offsets.items()
                    for value in (task_name, store, offset)
                ],
            )
    except duckdb.Error as exc:
        raise use_error(path, exc, f"writing the offsets of task {task_name!r}") from exc


__all__ = ["StateFile", "StateTransaction", "TaskOffsets", "write_offsets"]
