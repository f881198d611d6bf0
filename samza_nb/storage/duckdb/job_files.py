"""The job's DuckDB files: where they are, how they are opened, and the format that marks them as samza_nb's.

A job keeps its files in ``<job.logged.store.base.dir>/<job.name>-<job.id>/``: the checkpoint file
``samza.duckdb`` (the default checkpoint manager's) and one state file per task partition,
``stores/partition-<n>.duckdb``, holding that partition's store tables with the offsets they reflect. The
paths are :mod:`.paths`' (named here too), which asks no DuckDB.

Every such file carries the same schema (all in the database's default schema)::

    samza_nb_meta(key VARCHAR PRIMARY KEY, value VARCHAR)       -- format marker, version, job name/id
    samza_nb_checkpoint_tasks(task_name PRIMARY KEY, written_at_ms BIGINT)  -- tasks that have offsets
    samza_nb_checkpoints(task_name, system, stream, partition, "offset")   -- input offsets
    samza_nb_changelog_offsets(task_name, store_name, "offset")            -- store changelog offsets

A file that is not a DuckDB database, a DuckDB database without the samza_nb marker, or a marker of another
format, version or job is refused with :class:`CheckpointError` naming the file, and is never modified. The
same refusal (one validator) applies whoever opens the file: the stores, the checkpoint manager or a SQL
reader. DuckDB lets one process open a file for writing; another process gets an error saying it is in use.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Final

import duckdb

from samza_nb.errors import CheckpointError
from samza_nb.storage.duckdb import instances
from samza_nb.storage.duckdb.file_modes import drop_world_write
from samza_nb.storage.duckdb.open_errors import UnusableStateFileError, open_error
from samza_nb.storage.duckdb.paths import (
    DATABASE_FILE_NAME,
    DEFAULT_JOB_ID,
    DEFAULT_JOB_NAME,
    IN_MEMORY,
    STORES_DIRECTORY,
    job_database_path,
    job_directory,
    job_identity,
    partition_state_path,
    state_directory,
)

FORMAT_MARKER: Final[str] = "samza_nb-checkpoints"
"""Value of the ``format`` key in ``samza_nb_meta`` that identifies a samza_nb job database."""

FORMAT_VERSION: Final[str] = "1"
"""Value of the ``version`` key in ``samza_nb_meta`` that this code reads and writes."""

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


# -- opening -------------------------------------------------------------------------------------------
def open_database(path: str, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A connection to the DuckDB file at ``path`` (or :data:`IN_MEMORY`).

    For writing, the file and its directory are created when absent; read-only, the file must exist. Every
    failure is a :class:`CheckpointError` naming ``path`` and saying why: in use by another process, open for
    writing in this process (read-only), not a DuckDB file, not a regular file, directory not creatable.
    The file's contents are not checked here (see :func:`ensure_schema` and :func:`validate`). Close it
    with :func:`close_database`.
    """
    if path != IN_MEMORY:
        target = Path(path)
        if read_only and not target.is_file():
            raise CheckpointError(f"job database {path} does not exist (has the job run and committed?)")
        if target.exists() and not target.is_file():
            raise CheckpointError(f"job database {path} exists but is not a regular file")
        if not read_only:
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CheckpointError(f"job database {path}: cannot create its directory: {exc}") from exc
    try:
        if read_only or path == IN_MEMORY:
            connection = duckdb.connect(path, read_only=read_only)
        else:  # on a pooled DuckDB instance: creating one costs more than opening a small file
            connection = instances.attach(path)
    except duckdb.Error as exc:
        raise open_error(path, exc) from exc
    if path != IN_MEMORY and not read_only:
        drop_world_write(path)
    return connection


def close_database(connection: duckdb.DuckDBPyConnection) -> None:
    """Close a connection of :func:`open_database` (or any other): a file opened for writing is released
    and its DuckDB instance kept for the next file (see :mod:`.instances`). DuckDB's error propagates."""
    instances.detach(connection)


def hand_out(connection: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """``connection`` (of :func:`open_database`), as given to code outside samza_nb, which may change its
    DuckDB instance (register functions, global settings): that instance is closed with the file instead of
    being reused (see :mod:`.instances`)."""
    instances.keep_private(connection)
    return connection


# -- format --------------------------------------------------------------------------------------------
def ensure_schema(
    conn: duckdb.DuckDBPyConnection, path: str, job_name: str, job_id: str, *, new_database: bool = False
) -> None:
    """Make sure the database behind ``conn`` is this job's samza_nb database, creating it if empty.

    An empty database gets the schema and the marker (format, version, job name and id) in one
    transaction. An existing one must pass :func:`validate` for this job; otherwise
    :class:`CheckpointError` (naming ``path``) is raised and nothing is changed. Anything sharing the file
    (the job's stores) calls this before creating its own tables. ``conn`` must not be inside a transaction.
    ``new_database``: the caller has just created the database (no need to look for foreign tables).
    """
    if not new_database:
        rows = _meta_rows_if_complete(conn)
        if rows is not None:  # the common case, one query: every samza_nb table is there
            _check_marker(path, rows, (job_name, job_id))
            return
        if table_columns(conn, META_TABLE) is not None:
            validate(conn, path, (job_name, job_id))  # names what is missing or damaged
            return
        # Listing the tables costs ~10 ms on a cold database: only for an empty or a foreign one.
        tables = _table_names(conn, path)
        if tables:
            validate(conn, path, (job_name, job_id), tables=tables)  # foreign: refused
            return
    _create_schema(conn, path, job_name, job_id)  # what it wrote needs no reading back


def _create_schema(conn: duckdb.DuckDBPyConnection, path: str, job_name: str, job_id: str) -> None:
    try:
        conn.begin()
        try:
            # One statement string and one parameterised INSERT: ~9 ms on a new file, against ~22 ms for a
            # statement at a time and an executemany (the start of every new task's state file pays it).
            conn.execute("; ".join(_SCHEMA))
            marker = (
                ("format", FORMAT_MARKER),
                ("version", FORMAT_VERSION),
                ("job.name", job_name),
                ("job.id", job_id),
                ("created_at_ms", str(now_ms())),
            )
            rows = ", ".join(["(?, ?)"] * len(marker))
            conn.execute(
                f"INSERT OR IGNORE INTO {META_TABLE} (key, value) VALUES {rows}",
                [part for pair in marker for part in pair],
            )
            conn.commit()
        except BaseException:
            conn.rollback()
            raise
    except duckdb.Error as exc:
        raise CheckpointError(f"job database {path}: could not create the schema: {exc}") from exc


def table_columns(conn: duckdb.DuckDBPyConnection, table: str) -> list[tuple[str, str]] | None:
    """The ``(name, type)`` columns of ``table`` in the current schema, or None when there is no such
    table. One ``LIMIT 0`` query (the catalogue functions ``duckdb_tables()``/``duckdb_columns()`` cost
    10-20 ms on a database's first use). ``conn`` must not be inside a transaction: a missing table
    aborts it."""
    try:
        conn.execute(f"SELECT * FROM {quote_ident(table)} LIMIT 0")
    except duckdb.CatalogException:
        return None
    return [(str(column[0]), str(column[1])) for column in conn.description or ()]


def quote_ident(name: str) -> str:
    """``name`` as a quoted SQL identifier (any characters allowed)."""
    return '"' + name.replace('"', '""') + '"'


def validate(
    conn: duckdb.DuckDBPyConnection,
    path: str,
    job: tuple[str, str] | None,
    *,
    tables: set[str] | None = None,
) -> None:
    """Refuse (with :class:`CheckpointError` naming ``path``) a database that is not a samza_nb job database
    of this format and version, that belongs to another job than ``job`` (``(name, id)``; None accepts
    any job), or that lacks one of the samza_nb tables. Reads only; ``conn`` may be read-only. ``tables``:
    the samza_nb tables the database has, when the caller knows them."""
    if tables is None:
        rows = _meta_rows_if_complete(conn)
        if rows is not None:
            _check_marker(path, rows, job)
            return
        tables = {table for table in _REQUIRED_TABLES if table_columns(conn, table) is not None}
        if META_TABLE not in tables:
            tables = _table_names(conn, path)
    if META_TABLE not in tables:
        listed = ", ".join(sorted(tables)[:10]) + (", ..." if len(tables) > 10 else "")
        raise CheckpointError(
            f"job database {path} is a DuckDB database without the samza_nb marker (tables: {listed}); "
            "it belongs to something else, so it is neither used nor overwritten. Point "
            "job.logged.store.base.dir elsewhere or move the file away."
        )
    try:
        rows = conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall()
    except duckdb.Error as exc:
        error = open_error(path, exc)
        if isinstance(error, UnusableStateFileError):  # a damaged or missing block, not a foreign table
            raise error from exc
        raise CheckpointError(
            f"job database {path}: table {META_TABLE} is not samza_nb's ({exc}); refusing to use the file"
        ) from exc
    _check_marker(path, rows, job)
    missing = _REQUIRED_TABLES - tables
    if missing:
        raise CheckpointError(
            f"job database {path} is damaged: samza_nb tables {', '.join(sorted(missing))} are missing"
        )


def _meta_rows_if_complete(conn: duckdb.DuckDBPyConnection) -> list[tuple[object, object]] | None:
    """The marker rows, when every samza_nb table is there (one query); else None (the caller then
    finds out, table by table, what is missing or damaged)."""
    try:
        return conn.execute(_COMPLETE_META_QUERY).fetchall()
    except duckdb.Error:
        return None


# The marker rows, and empty selections of the other tables: a missing one fails the query.
_COMPLETE_META_QUERY: Final[str] = f"SELECT key, value FROM {META_TABLE}" + "".join(
    f" UNION ALL (SELECT NULL, NULL FROM {table} LIMIT 0)"
    for table in sorted(_REQUIRED_TABLES - {META_TABLE})
)


def _check_marker(path: str, rows: list[tuple[object, object]], job: tuple[str, str] | None) -> None:
    """Refuse a marker of another format, version or job (see :func:`validate`)."""
    meta = {str(key): str(value) for key, value in rows}
    found_format = meta.get("format")
    if found_format != FORMAT_MARKER:
        raise CheckpointError(
            f"job database {path} has format marker {found_format!r}, expected {FORMAT_MARKER!r}; "
            "it is not a samza_nb job database, so it is neither used nor overwritten"
        )
    found_version = meta.get("version")
    if found_version != FORMAT_VERSION:
        raise CheckpointError(
            f"job database {path} has format version {found_version!r}, but this samza_nb reads and "
            f"writes version {FORMAT_VERSION!r}; refusing to use it"
        )
    found_job = (meta.get("job.name"), meta.get("job.id"))
    if job is not None and found_job != job:
        raise CheckpointError(
            f"job database {path} belongs to job.name={found_job[0]!r} job.id={found_job[1]!r}, "
            f"not to job.name={job[0]!r} job.id={job[1]!r}; refusing to use another job's state"
        )


def _table_names(conn: duckdb.DuckDBPyConnection, path: str) -> set[str]:
    try:
        rows = conn.execute(
            "SELECT table_name FROM duckdb_tables() "
            "WHERE database_name = current_database() AND schema_name = current_schema()"
        ).fetchall()
    except duckdb.Error as exc:
        raise CheckpointError(f"job database {path}: could not list its tables: {exc}") from exc
    return {str(row[0]) for row in rows}


def now_ms() -> int:
    """Wall-clock time in ms, as recorded in the files."""
    return int(time.time() * 1000)


def database_path(conn: duckdb.DuckDBPyConnection) -> str:
    """The file behind ``conn`` (``":memory:"`` for an in-memory database)."""
    try:
        row = conn.execute(
            "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
        ).fetchone()
    except duckdb.Error:
        return "<unknown database>"
    return str(row[0]) if row and row[0] else ":memory:"


__all__ = [
    "CHANGELOG_TABLE",
    "DATABASE_FILE_NAME",
    "DEFAULT_JOB_ID",
    "DEFAULT_JOB_NAME",
    "FORMAT_MARKER",
    "FORMAT_VERSION",
    "IN_MEMORY",
    "META_TABLE",
    "OFFSETS_TABLE",
    "STORES_DIRECTORY",
    "TASKS_TABLE",
    "close_database",
    "database_path",
    "ensure_schema",
    "hand_out",
    "job_database_path",
    "job_directory",
    "job_identity",
    "open_database",
    "partition_state_path",
    "quote_ident",
    "state_directory",
    "table_columns",
    "validate",
]
