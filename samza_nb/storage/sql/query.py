"""SQL over a store's committed contents (what ``%%samza_sql`` runs).

A store appears as a relation named after the store with columns ``key``, ``value`` and ``partition``
(every partition of the store, unioned; see :mod:`samza_nb.storage.sql.relation` for how its bytes are
decoded). Results are :class:`~samza_nb.storage.sql.results.QueryResult`. Files are opened and validated by
:mod:`samza_nb.storage.duckdb.job_files`, like the job's own.

What a query sees is the state of the last commit: writes still pending in a running job (in its caches
and engines) are not in DuckDB yet. A query runs in its own read transaction on its own cursor, so it never
waits for the job's writer nor makes the writer wait (DuckDB's MVCC), and it is rolled back at the end: a
query can never change a store. Only one SELECT (or EXPLAIN) statement is accepted.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import duckdb

from samza_nb.config import Config
from samza_nb.errors import SamzaError
from samza_nb.serde.base import Serde
from samza_nb.serde.registry import SerdeRegistry
from samza_nb.storage.duckdb.job_files import job_identity, open_database, quote_ident, validate
from samza_nb.storage.duckdb.tables import read_catalogue
from samza_nb.storage.sql.relation import define_relation, resolve_serde
from samza_nb.storage.sql.results import QueryResult

_ALLOWED: Final = frozenset({"SELECT", "EXPLAIN"})


Connections = duckdb.DuckDBPyConnection | Sequence[duckdb.DuckDBPyConnection]
"""One job database, or several (e.g. one file per task partition) whose store partitions are unioned."""


def store_names(connection: Connections) -> list[str]:
    """The stores recorded in the job database(s) behind ``connection``."""
    names: set[str] = set()
    for conn in _as_list(connection):
        cur = conn.cursor()
        try:
            names.update(info.store_name for info in read_catalogue(cur))
        finally:
            cur.close()
    return sorted(names)


def query_store_on(
    connection: Connections,
    store: str,
    sql: str | None = None,
    key_serde: Serde | str | None = None,
    msg_serde: Serde | str | None = None,
    *,
    config: Config | None = None,
) -> QueryResult:
    """Run ``sql`` over the committed contents of ``store``, on fresh cursors of the job's connection(s).

    ``sql`` defaults to every row (``SELECT key, value, partition FROM <store> ORDER BY partition, key``).
    The serdes default to those the store was written with (from the store catalogue); names are resolved
    with ``config``'s serde registry (built-ins without it). With one connection the query runs in the job
    database itself; with several, each one's rows of the store (as of its last commit) are gathered into
    Arrow and the query runs over their union in a scratch in-memory database. Errors (an unknown store, a
    statement that is not one SELECT, a failing query) are :class:`SamzaError` naming the store.
    """
    statement = (
        sql.strip()
        if sql and sql.strip()
        else f"SELECT key, value, partition FROM {quote_ident(store)} ORDER BY partition, key"
    )
    _check_read_only(store, statement)
    registry = SerdeRegistry.from_config(config if config is not None else Config())
    connections = _as_list(connection)
    if len(connections) == 1:
        result: QueryResult = _in_database(
            connections[0], store, statement, registry, key_serde, msg_serde, run=True
        )
        return result
    tables = [
        _in_database(conn, store, None, registry, key_serde, msg_serde, run=False) for conn in connections
    ]
    found = [table for table in tables if table is not None]
    if not found:
        raise SamzaError(f"no store {store!r} in the job databases (stores: {_known(connections)})")
    return query_tables(found, store, statement)


def store_rows(connections: Connections, store: str, config: Config | None = None) -> Any:
    """The committed rows of ``store`` in the job database(s) behind ``connections``, decoded by the serdes
    it was written with, as one Arrow table ``(key, value, partition)``; None when none of them has it.
    What a container hands the coordinator, which unions every container's (:func:`query_tables`)."""
    import pyarrow as pa

    registry = SerdeRegistry.from_config(config if config is not None else Config())
    tables = [
        _in_database(conn, store, None, registry, None, None, run=False) for conn in _as_list(connections)
    ]
    found = [table for table in tables if table is not None]
    return pa.concat_tables(found, promote_options="permissive") if found else None


def query_tables(tables: Sequence[Any], store: str, sql: str | None = None) -> QueryResult:
    """Run ``sql`` (default: every row) over the union of ``tables`` (Arrow tables of :func:`store_rows`)
    as the relation ``store``, in a scratch in-memory database. Only one SELECT (or EXPLAIN) statement."""
    import pyarrow as pa

    statement = (
        sql.strip()
        if sql and sql.strip()
        else f"SELECT key, value, partition FROM {quote_ident(store)} ORDER BY partition, key"
    )
    _check_read_only(store, statement)
    if not tables:
        raise SamzaError(f"no store {store!r} in the job's containers")
    scratch = duckdb.connect()
    try:
        scratch.register(store, pa.concat_tables(list(tables), promote_options="permissive"))
        return _run(scratch, store, statement)
    finally:
        scratch.close()


def _in_database(
    connection: duckdb.DuckDBPyConnection,
    store: str,
    statement: str | None,
    registry: SerdeRegistry,
    key_serde: Serde | str | None,
    msg_serde: Serde | str | None,
    *,
    run: bool,
) -> Any:
    """In one read transaction of ``connection``: define the store's relation, then run ``statement``
    (``run``) or return the relation's rows as an Arrow table (None when the store is not in it)."""
    cur = connection.cursor()
    try:
        cur.begin()
        try:
            partitions = read_catalogue(cur, store)
            if not partitions:
                if not run:
                    return None
                raise SamzaError(f"no store {store!r} in the job database (stores: {_known([connection])})")
            kserde = resolve_serde(registry, key_serde, partitions[0].key_serde, store, "key")
            vserde = resolve_serde(registry, msg_serde, partitions[0].msg_serde, store, "msg")
            define_relation(cur, store, partitions, kserde, vserde)
            if run and statement is not None:
                return _run(cur, store, statement)
            return cur.sql(f"SELECT key, value, partition FROM {quote_ident(store)}").to_arrow_table()
        finally:
            with contextlib.suppress(duckdb.Error):
                cur.rollback()  # a query never changes anything
    finally:
        cur.close()


def _run(cur: duckdb.DuckDBPyConnection, store: str, statement: str) -> QueryResult:
    try:
        cur.execute(statement)
        columns = tuple(str(d[0]) for d in cur.description or ())
        return QueryResult(columns, cur.fetchall())
    except duckdb.Error as exc:
        raise SamzaError(f"query on store {store!r} failed: {_one_line(exc)}") from exc


def _one_line(exc: duckdb.Error) -> str:
    """DuckDB's message in one line: its parser and binder errors add a ``LINE n:`` excerpt of the query and
    a line of carets below it; the excerpt is kept (in parentheses), the carets dropped."""
    lines = [line.strip() for line in str(exc).splitlines()]
    kept = [line for line in lines if line and set(line) != {"^"}]
    if not kept:
        return type(exc).__name__
    return kept[0] + "".join(f" ({line})" for line in kept[1:])


def _as_list(connection: Connections) -> list[duckdb.DuckDBPyConnection]:
    if isinstance(connection, duckdb.DuckDBPyConnection):
        return [connection]
    return list(connection)


def _known(connections: list[duckdb.DuckDBPyConnection]) -> str:
    return ", ".join(store_names(connections)) or "none"


def query_store(
    database_path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    store: str,
    sql: str | None = None,
    config: Config | None = None,
) -> QueryResult:
    """Run ``sql`` over ``store`` in the job database file(s) at ``database_path``, opened read-only.

    For a job that is not running (DuckDB lets a file be opened read-only only when no process has it
    open for writing; while a job runs in this process, use :func:`query_store_on` with its connections).
    Several files (one per task partition) are queried as one store. A missing, corrupt or foreign file
    is a :class:`CheckpointError` naming the path.
    """
    raw = [database_path] if isinstance(database_path, (str, os.PathLike)) else list(database_path)
    job = job_identity(config) if config is not None else None
    connections: list[duckdb.DuckDBPyConnection] = []
    try:
        for item in raw:
            path = str(Path(item).expanduser().absolute())
            conn = open_database(path, read_only=True)
            connections.append(conn)
            validate(conn, path, job)
        return query_store_on(connections, store, sql, config=config)
    finally:
        for conn in connections:
            conn.close()


def _check_read_only(store: str, sql: str) -> None:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise SamzaError(f"query on store {store!r} does not parse: {_one_line(exc)}") from exc
    kinds = [str(s.type).rsplit(".", 1)[-1] for s in statements]
    if len(kinds) != 1 or kinds[0] not in _ALLOWED:
        raise SamzaError(
            f"a query on store {store!r} must be exactly one SELECT (or EXPLAIN) statement; got "
            f"{', '.join(kinds) or 'nothing'}: stores are read-only here"
        )


__all__ = ["QueryResult", "query_store", "query_store_on", "query_tables", "store_names", "store_rows"]
