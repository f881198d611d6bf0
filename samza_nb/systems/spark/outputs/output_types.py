"""The column types of a Spark system's outputs (docs/architecture.md §13), the same in a stream's files.

Spark merges the schemas of a stream's files only when each column has one type, so every column of an
output stream keeps ONE type: the one its ``systems.<s>.streams.<t>.spark.schema`` declares (a Spark DDL
column list, :mod:`.ddl`), else the first one seen — in a file this producer wrote, or in the footer of a
file already in the stream's directory (read at start, and again when a column appears that has no type
yet). A first-seen type is inferred by pyarrow from the first commit's values and made stable: decimals
are ``decimal(38,18)`` (Spark's type for Python's Decimal; declare ``decimal(p,s)`` for another),
timestamps are microseconds, ``timestamp`` (UTC) when the datetimes have a tzinfo and ``timestamp_ntz``
when they are naive. Later values are converted to the kept type: a naive datetime in a ``timestamp``
column is taken as UTC, an aware one in a ``timestamp_ntz`` column is stored as its UTC wall-clock time,
an int in a double column is stored as a double.

A dict field is a ``struct`` (its fields: the keys seen; a struct column gains a field when a key first
appears, which Spark's mergeSchema merges), or a ``map<K, V>`` when the schema declares one (keys that vary
freely). A message's value that does not fit its column's type (a Decimal with more digits than the
declared scale, a string in a bigint column, a float with a fraction in an int one) is a bad message: a
:class:`BadMessageError` naming the stream, the task, the column and the value, which fails the job without
a retry (the same message would fail again).

Columns: a dict message's fields (when every message of the commit is a dict), plus ``key`` — the
envelope's key — only when the schema declares a column ``key`` (a dict message then cannot have a field
``key``); the envelope key is otherwise left out, as a dict message carries its own key fields. Any other
message is the column ``value``, with ``key`` beside it when a message of the commit has a key or the schema
declares it. Every declared column is in every file (null where no message set it).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.errors import BadMessageError, ConfigError, SamzaError
from samza_nb.systems.spark.outputs.ddl import (
    DDLError,
    contains_type,
    merge_type,
    parse_schema,
    spark_name,
    stable_type,
    truncated,
)

if TYPE_CHECKING:
    from samza_nb.config import Config

log = logging.getLogger(__name__)

_CONVERSION_ERRORS: tuple[type[BaseException], ...] = (TypeError, ValueError, OverflowError, ArithmeticError)


class Sent(Protocol):
    """What one task sent to one stream: the envelopes' keys and messages, in order."""

    keys: list[Any]
    messages: list[Any]


def schema_key(system: str, stream: str) -> str:
    """The config key declaring the columns of output ``stream`` of ``system``."""
    return f"systems.{system}.streams.{stream}.spark.schema"


def declared_schemas(config: Config | None, system: str) -> dict[str, Any]:
    """Per stream of ``system``, the pyarrow schema its ``spark.schema`` declares; a ConfigError naming the
    key when one does not parse."""
    if config is None:
        return {}
    pattern = re.compile(rf"systems\.{re.escape(system)}\.streams\.(.+)\.spark\.schema")
    schemas: dict[str, Any] = {}
    for key in config:
        match = pattern.fullmatch(key)
        if match is None:
            continue
        try:
            schemas[match.group(1)] = parse_schema(config.get_str(key) or "")
        except DDLError as exc:
            raise ConfigError(f"{key}: {exc}", key=key) from None
    return schemas


class _KnownTypes:
    """Per stream: the type of each column — declared, or from files written or read (the first null-free
    type seen, a struct gaining the fields seen later) — and the names of the files already looked at.
    Thread-safe."""

    def __init__(self, system: str = "spark", config: Config | None = None) -> None:
        self.system = system
        self._declared = declared_schemas(config, system)
        self._lock = threading.Lock()
        self._types: dict[str, dict[str, Any]] = {}
        self._seen: dict[str, set[str]] = {}

    def seed(self, directories: Mapping[str, Path]) -> None:
        """Read the footers of the files in each stream's directory (``directories``: stream -> directory)."""
        for stream, directory in sorted(directories.items()):
            self._read_new(stream, directory)

    def learn(self, stream: str, schema: Any, name: str) -> None:
        """Take the column types of the file ``name`` of ``stream`` (written or read)."""
        with self._lock:
            self._seen.setdefault(stream, set()).add(name)
            known = self._types.setdefault(stream, {})
            for field in schema:
                merged = field.type if field.name not in known else merge_type(known[field.name], field.type)
                if not _has_null(merged):
                    known[field.name] = merged

    def table(self, task: str, stream: str, directory: Path, sent: Sent) -> Any:
        """What ``task`` sent to ``stream`` as a pyarrow table with the stream's column types (see the
        module); a BadMessageError naming the column and the value that does not fit."""
        declared = self._declared.get(stream)
        names = _column_names(sent, declared)
        if any(name not in self._known(stream) for name in names):
            self._read_new(stream, directory)  # another container may have written it since
        types = self._known(stream)
        if declared is not None:
            types.update((field.name, field.type) for field in declared)
        return self.typed(stream, directory, _table(task, self.system, stream, sent, types, declared))

    def typed(self, stream: str, directory: Path, table: Any) -> Any:
        """``table`` with each all-null column given its known type, left out when none is known (kept when
        the file would have no column left). A column with a null type nested in it (an always empty list) is
        cast to the known type when it can be."""
        import pyarrow as pa

        untyped = [name for name, column in zip(table.column_names, table.columns, strict=True)
                   if _has_null(column.type)]  # fmt: skip
        if not untyped:
            return table
        if any(name not in self._known(stream) for name in untyped):
            self._read_new(stream, directory)  # another container may have written it since
        known = self._known(stream)
        columns: dict[str, Any] = {}
        for name, column in zip(table.column_names, table.columns, strict=True):
            if name not in untyped:
                columns[name] = column
            elif name in known and pa.types.is_null(column.type):
                columns[name] = pa.nulls(len(column), known[name])
            elif name in known:
                try:
                    columns[name] = column.cast(known[name])
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                    columns[name] = column
            elif not pa.types.is_null(column.type):
                columns[name] = column  # data with an untyped part (an empty list): kept as it is
        if not columns:
            return table
        return pa.table(columns)

    def _known(self, stream: str) -> dict[str, Any]:
        with self._lock:
            return dict(self._types.get(stream, {}))

    def _read_new(self, stream: str, directory: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        with self._lock:
            seen = set(self._seen.get(stream, set()))
        try:
            paths = sorted(_visible_files(directory))
        except OSError:
            return
        for path in paths:
            if path.name in seen or path.suffix != ".parquet":
                continue
            try:
                schema = pq.read_schema(path)
            except (OSError, pa.ArrowException) as exc:
                log.warning("Spark output %s: cannot read the schema of %s: %s", stream, path, exc)
                continue
            self.learn(stream, schema, path.name)


def _has_null(data_type: Any) -> bool:
    """True when ``data_type`` is null or has a null type nested in it."""
    import pyarrow as pa

    if pa.types.is_null(data_type):
        return True
    if (
        pa.types.is_list(data_type)
        or pa.types.is_large_list(data_type)
        or pa.types.is_fixed_size_list(data_type)
    ):
        return _has_null(data_type.value_type)
    if pa.types.is_map(data_type):
        return _has_null(data_type.key_type) or _has_null(data_type.item_type)
    if pa.types.is_struct(data_type):
        return any(_has_null(data_type.field(i).type) for i in range(data_type.num_fields))
    return False


def _visible_files(directory: Path) -> list[Path]:
    """The files of ``directory`` Spark reads (not hidden, not ``_``-prefixed)."""
    return [path for path in directory.iterdir()
            if path.is_file() and not path.name.startswith((".", "_"))]  # fmt: skip


def _column_names(sent: Sent, declared: Any) -> list[str]:
    """The columns of the table of ``sent`` (see the module): declared ones first, then as they appear."""
    names: dict[str, None] = dict.fromkeys(declared.names if declared is not None else [])
    messages = sent.messages
    if messages and all(isinstance(message, dict) for message in messages):
        for message in messages:
            names.update(dict.fromkeys(message))
    else:
        if any(key is not None for key in sent.keys):
            names["key"] = None
        names["value"] = None
    return list(names)


def _table(
    task: str,
    system: str,
    stream: str,
    sent: Sent,
    types: Mapping[str, Any] | None = None,
    declared: Any = None,
) -> Any:
    """The messages of ``sent`` as a pyarrow table (see the module for the columns), each column of a type in
    ``types`` converted to it, the others inferred."""
    import pyarrow as pa

    where = f"{system}.{stream} output of task {task!r}"
    types = types or {}
    messages = sent.messages
    declared_key = declared is not None and "key" in declared.names
    values: dict[str, list[Any]] = {}
    if messages and all(isinstance(message, dict) for message in messages):
        if declared_key and any("key" in message for message in messages):
            raise BadMessageError(
                f"{where}: messages with keys cannot have a field 'key' (a declared column)"
            )
        for name in _column_names(sent, declared):
            if not isinstance(name, str):
                raise BadMessageError(f"{where}: a message has a field named {name!r}, not a string")
            values[name] = [message.get(name) for message in messages]
        if declared_key:
            values["key"] = list(sent.keys)
    else:
        if declared_key or any(key is not None for key in sent.keys):
            values["key"] = list(sent.keys)
        values["value"] = list(messages)
    if declared is not None:
        values.update((name, [None] * len(messages)) for name in declared.names if name not in values)
    try:
        return pa.table(
            {name: _column(where, name, column, types.get(name)) for name, column in values.items()}
        )
    except SamzaError:
        raise
    except Exception as exc:
        raise BadMessageError(f"{where} cannot be stored as parquet: {exc}") from None


def _column(where: str, name: str, values: list[Any], known: Any) -> Any:
    """``values`` as a pyarrow array of type ``known`` (a struct gaining new fields), or inferred and made
    stable (see the module) when ``known`` is None; a BadMessageError naming the first value that does not
    fit."""
    import pyarrow as pa

    if known is None:
        try:
            array = pa.array(values)
        except (pa.ArrowException, *_CONVERSION_ERRORS) as exc:
            raise _unfit(where, name, values, None, exc) from None
        target = stable_type(array.type)
        if target == array.type:
            return array
    else:
        target = known
        if contains_type(known, pa.types.is_struct) or contains_type(known, pa.types.is_list):
            try:
                target = merge_type(known, pa.array(values).type)
            except (pa.ArrowException, *_CONVERSION_ERRORS):
                target = known  # mixed values: converted to the known type or named below
    try:
        array = pa.array(values, type=target)
    except (pa.ArrowException, *_CONVERSION_ERRORS) as exc:
        raise _unfit(where, name, values, target, exc) from None
    if contains_type(target, pa.types.is_integer) and any(truncated(value, target) for value in values):
        raise _unfit(where, name, values, target, None)
    return array


def _unfit(
    where: str, name: str, values: list[Any], target: Any, exc: BaseException | None
) -> BadMessageError:
    """The error naming the first of ``values`` that does not fit ``target`` (None: the type pyarrow infers
    from the column's first non-null value)."""
    import pyarrow as pa

    if target is None:
        first = next((value for value in values if value is not None), None)
        try:
            target = pa.array([first]).type
        except (pa.ArrowException, *_CONVERSION_ERRORS):
            return BadMessageError(f"{where}: column {name!r}: value {_show(first)} cannot be stored: {exc}")
    for value in values:
        try:
            pa.array([value], type=target)
        except (pa.ArrowException, *_CONVERSION_ERRORS) as error:
            return BadMessageError(
                f"{where}: column {name!r}: value {_show(value)} does not fit {spark_name(target)} ({error})"
            )
        if truncated(value, target):
            return BadMessageError(
                f"{where}: column {name!r}: value {_show(value)} does not fit {spark_name(target)}"
            )
    return BadMessageError(f"{where}: column {name!r} cannot be stored as {spark_name(target)}: {exc}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _spark_type(data_type: Any) -> str | None:
    """The Spark type a parquet column of ``data_type`` is read as, for plain types (None otherwise)."""
    import pyarrow as pa

    if pa.types.is_null(data_type):
        return "int"  # what Spark reads a null-typed parquet column as
    for test, name in _SPARK_TYPES:
        if getattr(pa.types, test)(data_type):
            return name
    return None


_SPARK_TYPES = (
    ("is_boolean", "boolean"), ("is_int8", "tinyint"), ("is_int16", "smallint"), ("is_int32", "int"),
    ("is_int64", "bigint"), ("is_uint8", "smallint"), ("is_uint16", "int"), ("is_uint32", "bigint"),
    ("is_float32", "float"), ("is_float64", "double"), ("is_string", "string"),
    ("is_large_string", "string"), ("is_binary", "binary"), ("is_large_binary", "binary"),
    ("is_date32", "date"),
)  # fmt: skip


def _type_conflict(files: list[Path], kind: Any) -> str | None:
    """The first column whose ``kind`` (of its pyarrow type; None: not compared) differs between two of
    ``files``, described with both types and files; None when there is none (unreadable footers skipped)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    first: dict[str, tuple[str, Any, str]] = {}
    for path in files:
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException):
            continue
        for field in schema:
            seen = kind(field.type)
            if seen is None:
                continue
            if field.name not in first:
                first[field.name] = (seen, field.type, path.name)
            elif first[field.name][0] != seen:
                _, other_type, other_file = first[field.name]
                return (
                    f"column {field.name!r} is {other_type} in {other_file} but {field.type} in {path.name}"
                )
    return None


__all__ = ["Sent", "declared_schemas", "schema_key"]
