"""How a store's bytes appear in SQL: the relation ``<store>(key, value, partition)`` over its partitions.

Keys and values are decoded by their serdes: ``string`` → VARCHAR, ``int``/``long`` → BIGINT, ``json`` → JSON,
``bytes`` → BLOB (decoded inside DuckDB); other serdes are decoded in Python into an Arrow table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import duckdb

from samza_nb.errors import SamzaError
from samza_nb.serde.base import Serde
from samza_nb.serde.builtin import BytesSerde, IntSerde, JsonSerde, LongSerde, StringSerde
from samza_nb.serde.registry import SerdeRegistry
from samza_nb.storage.duckdb.job_files import quote_ident
from samza_nb.storage.duckdb.tables import StorePartitionInfo


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


def resolve_serde(
    registry: SerdeRegistry, given: Serde | str | None, recorded: str, store: str, kind: str
) -> Serde:
    """The serde to decode ``store``'s ``kind`` ("key"/"msg") with: ``given`` (a serde, or a name looked up
    in ``registry``), else the ``recorded`` name its bytes were written with."""
    if given is not None and not isinstance(given, str):
        return given
    name = given if isinstance(given, str) else recorded
    return registry.get(name, key=f"stores.{store}.{kind}.serde")


def define_relation(
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


__all__ = ["define_relation", "resolve_serde"]
