"""SQL over a store's committed contents (what ``%%samza_sql`` runs).

A store appears as a relation named after the store with columns ``key``, ``value`` and ``partition``
(every partition of the store, unioned), keys and values decoded by their serdes: ``string`` → VARCHAR,
``int``/``long`` → BIGINT, ``json`` → JSON, ``bytes`` → BLOB (decoded inside DuckDB); other serdes are
decoded in Python into an Arrow table.

What a query sees is the state of the last commit: writes still pending in a running job (in its caches
and engines) are not in DuckDB yet. A query runs in its own read transaction on its own cursor, so it never
waits for the job's writer nor makes the writer wait (DuckDB's MVCC), and it is rolled back at the end: a
query can never change a store. Only one SELECT (or EXPLAIN) statement is accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import duckdb

from samza_nb.checkpoint.duckdb import META_TABLE, ensure_schema
from samza_nb.config import Config
from samza_nb.errors import CheckpointError, SamzaError
from samza_nb.serde.base import Serde
from samza_nb.serde.builtin import BytesSerde, IntSerde, JsonSerde, LongSerde, StringSerde
from samza_nb.serde.registry import SerdeRegistry
from samza_nb.storage.engine import quote_ident
from samza_nb.storage.tables import StorePartitionInfo, read_catalogue

_ALLOWED: Final = frozenset({"SELECT", "EXPLAIN"})


def _int_sql(column: str, size: int) -> str:
    hexed = f"('0x' || hex({column}))::UBIGINT"
    if size == 4:
        signed = f"({hexed}::BIGINT - CASE WHEN {hexed} >= 2147483648 THEN 4294967296 ELSE 0 END)"
    else:
        signed = (
            f"({hexed}::HUGEINT - CASE WHEN {hexed} >= 9223372036854775808::UBIGINT "
            "THEN 18446744073709551616::HUGEINT ELSE 0::HUGEINT END)::BIGINT"
        )
    return f"CASE WHEN octet_length({column}) = {size} THEN {signed} END"


_SQL_DECODERS: Final[dict[type, Callable[[str], str]]] = {
    BytesSerde: lambda column: column,
    StringSerde: lambda column: f"decode({column})",
    JsonSerde: lambda column: f"decode({column})::JSON",
    IntSerde: lambda column: _int_sql(column, 4),
    LongSerde: lambda column: _int_sql(column, 8),
}


@dataclass(frozen=True)
class QueryResult:
    """The rows of a store query and their column names."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]] = field(repr=False)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.rows)

    def to_pandas(self) -> Any:
        """The result as a pandas DataFrame (pandas must be installed)."""
        try:
            import pandas as pd  # type: ignore[import-untyped,unused-ignore]
        except ImportError as exc:
            raise SamzaError("to_pandas() needs pandas: pip install pandas") from exc
        return pd.DataFrame(self.rows, columns=list(self.columns))

    def to_arrow(self) -> Any:
        """The result as a pyarrow Table."""
        import pyarrow as pa

        return pa.table({name: [row[i] for row in self.rows] for i, name in enumerate(self.columns)})

    def __repr__(self) -> str:
        return f"QueryResult(columns={self.columns!r}, rows=<{len(self.rows)} rows>)"

    def _repr_html_(self, limit: int = 50) -> str:
        head = "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
        body = "".join(
            "<tr>"
            + "".join(f"<td>{html.escape(repr(v) if isinstance(v, bytes) else str(v))}</td>" for v in row)
            + "</tr>"
            for row in self.rows[:limit]
        )
        more = f"<p>{len(self.rows) - limit} more rows</p>" if len(self.rows) > limit else ""
        return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


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
    import pyarrow as pa

    tables = [
        _in_database(conn, store, None, registry, key_serde, msg_serde, run=False) for conn in connections
    ]
    found = [table for table in tables if table is not None]
    if not found:
        raise SamzaError(f"no store {store!r} in the job databases (stores: {_known(connections)})")
    scratch = duckdb.connect()
    try:
        scratch.register(store, pa.concat_tables(found, promote_options="permissive"))
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
            kserde = _serde(registry, key_serde, partitions[0].key_serde, store, "key")
            vserde = _serde(registry, msg_serde, partitions[0].msg_serde, store, "msg")
            _define_relation(cur, store, partitions, kserde, vserde)
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
        raise SamzaError(f"query on store {store!r} failed: {exc}") from exc


def _as_list(connection: Connections) -> list[duckdb.DuckDBPyConnection]:
    if isinstance(connection, duckdb.DuckDBPyConnection):
        return [connection]
    return list(connection)


def _known(connections: list[duckdb.DuckDBPyConnection]) -> str:
    return ", ".join(store_names(connections)) or "none"


async def query_store_on_async(
    connection: Connections,
    store: str,
    sql: str | None = None,
    key_serde: Serde | str | None = None,
    msg_serde: Serde | str | None = None,
    *,
    config: Config | None = None,
) -> QueryResult:
    """:func:`query_store_on` on a worker thread, so an event loop running the job keeps running."""
    return await asyncio.to_thread(
        query_store_on, connection, store, sql, key_serde, msg_serde, config=config
    )


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
    connections: list[duckdb.DuckDBPyConnection] = []
    try:
        for item in raw:
            path = Path(item).expanduser().absolute()
            if not path.is_file():
                raise CheckpointError(f"job database {path} does not exist (has the job run and committed?)")
            try:
                conn = duckdb.connect(str(path), read_only=True)
            except duckdb.Error as exc:
                raise _open_error(path, exc) from exc
            connections.append(conn)
            _validate(conn, path, config)
        return query_store_on(connections, store, sql, config=config)
    finally:
        for conn in connections:
            conn.close()


def _open_error(path: Path, exc: duckdb.Error) -> SamzaError:
    text = str(exc)
    lowered = text.lower()
    if "different configuration" in lowered:
        return SamzaError(
            f"job database {path} is open for writing in this process (a running job?): query it with "
            f"query_store_on(<the job's DuckDB connection>, ...) instead: {text}"
        )
    if "lock" in lowered:
        return CheckpointError(
            f"job database {path} is in use by another process (a running job?); DuckDB cannot open it "
            f"read-only meanwhile: {text}"
        )
    if "not a valid duckdb database" in lowered:
        return CheckpointError(
            f"{path} is not a DuckDB database (corrupt or a different kind of file): {text}"
        )
    return CheckpointError(f"job database {path} could not be opened: {text}")


def _validate(conn: duckdb.DuckDBPyConnection, path: Path, config: Config | None) -> None:
    """The file must be a samza_nb job database (of ``config``'s job when given)."""
    try:
        rows = conn.execute(f"SELECT key, value FROM {META_TABLE}").fetchall()
    except duckdb.Error as exc:
        raise CheckpointError(
            f"{path} is a DuckDB database without the samza_nb marker; it is not a samza_nb job database"
        ) from exc
    meta = {str(k): str(v) for k, v in rows}
    job_name = meta.get("job.name", "")
    job_id = meta.get("job.id", "")
    if config is not None:
        job_name = config.get_str("job.name") or "samza-nb-job"
        job_id = config.get_str("job.id") or "1"
    ensure_schema(conn, str(path), job_name, job_id)  # read-only here: the file is valid, nothing is created


def _check_read_only(store: str, sql: str) -> None:
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise SamzaError(f"query on store {store!r} does not parse: {exc}") from exc
    kinds = [str(s.type).rsplit(".", 1)[-1] for s in statements]
    if len(kinds) != 1 or kinds[0] not in _ALLOWED:
        raise SamzaError(
            f"a query on store {store!r} must be exactly one SELECT (or EXPLAIN) statement; got "
            f"{', '.join(kinds) or 'nothing'}: stores are read-only here"
        )


def _serde(registry: SerdeRegistry, given: Serde | str | None, recorded: str, store: str, kind: str) -> Serde:
    if given is not None and not isinstance(given, str):
        return given
    name = given if isinstance(given, str) else recorded
    return registry.get(name, key=f"stores.{store}.{kind}.serde")


def _define_relation(
    cur: duckdb.DuckDBPyConnection,
    store: str,
    partitions: list[StorePartitionInfo],
    key_serde: Serde,
    msg_serde: Serde,
) -> None:
    """Create the temporary view ``<store>(key, value, partition)`` over all of the store's partitions."""
    key_sql = _SQL_DECODERS.get(type(key_serde))
    value_sql = _SQL_DECODERS.get(type(msg_serde))
    if key_sql is not None and value_sql is not None:
        selects = [
            f"SELECT {key_sql('k')} AS key, {value_sql('v')} AS value, {p.partition} AS partition "
            f"FROM {quote_ident(p.table_name)}"
            for p in partitions
        ]
        body = " UNION ALL ".join(selects)
    else:
        decoded = _decode_in_python(cur, store, partitions, key_serde, msg_serde)
        body = f"SELECT key, value, partition FROM {decoded}"
    try:
        cur.execute(f"CREATE TEMP VIEW {quote_ident(store)} AS {body}")
    except duckdb.Error as exc:
        raise SamzaError(f"store {store!r}: defining its SQL relation failed: {exc}") from exc


def _decode_in_python(
    cur: duckdb.DuckDBPyConnection,
    store: str,
    partitions: list[StorePartitionInfo],
    key_serde: Serde,
    msg_serde: Serde,
) -> str:
    """Decode the store's rows with its serdes into an Arrow table registered on ``cur``; its name."""
    import pyarrow as pa

    keys: list[Any] = []
    values: list[Any] = []
    numbers: list[int] = []
    for p in partitions:
        for kb, vb in cur.execute(f"SELECT k, v FROM {quote_ident(p.table_name)} ORDER BY k").fetchall():
            try:
                keys.append(key_serde.from_bytes(kb))
                values.append(msg_serde.from_bytes(vb))
            except Exception as exc:
                raise SamzaError(
                    f"store {store!r}: row with key bytes {kb!r} of partition {p.partition} cannot be "
                    f"decoded: {exc}"
                ) from exc
            numbers.append(p.partition)
    table = pa.table(
        {"key": _column(keys), "value": _column(values), "partition": pa.array(numbers, pa.int32())}
    )
    name = f"__samza_nb_decoded_{abs(hash(store)):x}"
    cur.register(name, table)
    return quote_ident(name)


def _column(items: list[Any]) -> Any:
    import pyarrow as pa

    try:
        return pa.array(items)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([None if item is None else repr(item) for item in items], pa.string())


__all__ = ["QueryResult", "query_store", "query_store_on", "query_store_on_async", "store_names"]
