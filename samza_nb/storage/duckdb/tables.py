"""Where stores live in the job's DuckDB file: one table per store and task partition, and a catalogue.

Table ``store__<name>__p<partition>`` holds a store partition's committed rows (``k BLOB PRIMARY KEY,
v BLOB``). Table ``samza_nb_stores`` records, for every store partition opened, its table and the serde
names its bytes were written with, so that SQL readers can decode them and a later run with other serdes
is refused instead of misreading the data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import duckdb

from samza_nb.errors import ConfigError
from samza_nb.storage.base import StoreError

STORES_TABLE: Final = "samza_nb_stores"

_SCHEMA: Final = (
    f"CREATE TABLE IF NOT EXISTS {STORES_TABLE} ("
    "store_name VARCHAR NOT NULL, partition INTEGER NOT NULL, table_name VARCHAR NOT NULL, "
    "key_serde VARCHAR NOT NULL, msg_serde VARCHAR NOT NULL, PRIMARY KEY (store_name, partition))"
)


def table_name(store_name: str, partition: int) -> str:
    """The table of partition ``partition`` of store ``store_name``: ``store__<name>__p<partition>``."""
    return f"store__{store_name}__p{partition}"


@dataclass(frozen=True)
class StorePartitionInfo:
    """One row of the catalogue: a store partition, its table and the serde names of its bytes."""

    store_name: str
    partition: int
    table_name: str
    key_serde: str
    msg_serde: str


def ensure_catalogue(conn: duckdb.DuckDBPyConnection) -> None:
    """Create the catalogue table if it is missing (``conn`` must not be inside a transaction)."""
    conn.execute(_SCHEMA)


def has_catalogue(conn: duckdb.DuckDBPyConnection) -> bool:
    """True when the database behind ``conn`` has the catalogue table."""
    row = conn.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema() AND table_name = ?",
        [STORES_TABLE],
    ).fetchone()
    return bool(row and row[0])


def read_catalogue(
    conn: duckdb.DuckDBPyConnection, store_name: str | None = None
) -> list[StorePartitionInfo]:
    """The catalogue rows (of one store, or all), by store and partition; empty without a catalogue."""
    if not has_catalogue(conn):
        return []
    return _catalogue_rows(conn, store_name)


def _catalogue_rows(conn: duckdb.DuckDBPyConnection, store_name: str | None) -> list[StorePartitionInfo]:
    sql = f"SELECT store_name, partition, table_name, key_serde, msg_serde FROM {STORES_TABLE}"
    params: list[object] = []
    if store_name is not None:
        sql += " WHERE store_name = ?"
        params.append(store_name)
    rows = conn.execute(sql + " ORDER BY store_name, partition", params).fetchall()
    return [StorePartitionInfo(str(s), int(p), str(t), str(k), str(m)) for s, p, t, k, m in rows]


def record_partition(
    conn: duckdb.DuckDBPyConnection, info: StorePartitionInfo, *, table_has_rows: bool
) -> None:
    """Record ``info`` in the catalogue (created before by :func:`ensure_catalogue`).

    If the partition was recorded with other serde names and its table holds rows, those rows would be
    misread: a :class:`ConfigError` names the serde key that changed, and nothing is recorded.
    """
    existing = _catalogue_rows(conn, info.store_name) if table_has_rows else []  # no rows to misread
    for old in existing:
        if old.partition != info.partition:
            continue
        for kind, before, now in (
            ("key", old.key_serde, info.key_serde),
            ("msg", old.msg_serde, info.msg_serde),
        ):
            if before != now:
                key = f"stores.{info.store_name}.{kind}.serde"
                raise ConfigError(
                    f"{key}={now!r}, but partition {info.partition} of store {info.store_name!r} was written "
                    f"with the {before!r} serde; its data cannot be read with another serde. Set {key} back "
                    f"to {before!r}, or delete the store's state (table {old.table_name}) to start over.",
                    key=key,
                )
    try:
        conn.execute(
            f"INSERT OR REPLACE INTO {STORES_TABLE} VALUES (?, ?, ?, ?, ?)",
            [info.store_name, info.partition, info.table_name, info.key_serde, info.msg_serde],
        )
    except duckdb.Error as exc:
        raise StoreError(
            f"store {info.store_name!r}: recording partition {info.partition} in {STORES_TABLE} "
            f"failed: {exc}",
            store=info.store_name,
        ) from exc


__all__ = [
    "STORES_TABLE",
    "StorePartitionInfo",
    "ensure_catalogue",
    "has_catalogue",
    "read_catalogue",
    "record_partition",
    "table_name",
]
