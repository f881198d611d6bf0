"""Spark DDL column lists as pyarrow schemas, and pyarrow types named as Spark names them — without Spark.

``systems.<s>.streams.<t>.spark.schema`` declares an output's columns the way Spark's
``DataFrameReader.schema`` takes them: ``"user_id string, total decimal(10,2), at timestamp, counts
map<string, bigint>"``. The sink runs in containers that have pyarrow and no Spark, so this module
parses that small language itself: ``boolean``, ``tinyint``/``byte``, ``smallint``/``short``,
``int``/``integer``, ``bigint``/``long``,
``float``/``real``, ``double``, ``decimal(p,s)``/``numeric`` (``decimal`` alone: ``decimal(10,0)``),
``string``/``varchar(n)``/``char(n)``, ``binary``, ``date``, ``timestamp`` (UTC instants),
``timestamp_ntz`` (wall-clock times), ``array<T>``, ``map<K, V>``, ``struct<name: T, ...>``; names may be
back-quoted; ``NOT NULL`` and ``COMMENT '...'`` are accepted and ignored.

Beside it, the rules that keep an output column's type (:mod:`.output_types`): :func:`stable_type`,
:func:`merge_type`, :func:`truncated`.
"""

from __future__ import annotations

import re
from typing import Any

_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\d+|'(?:[^'\\]|\\.)*'|[<>(),:])")


class DDLError(ValueError):
    """A DDL string that is not a column list this module understands (the message says where)."""


def parse_schema(text: str) -> Any:
    """The pyarrow schema of the column list ``text`` (see the module); a DDLError naming what is wrong."""
    import pyarrow as pa

    parser = _Parser(text)
    fields = parser.fields(end=None)
    if not fields:
        raise DDLError(f"no column in {text!r}")
    names = [field.name for field in fields]
    duplicate = next((name for name in names if names.count(name) > 1), None)
    if duplicate is not None:
        raise DDLError(f"column {duplicate!r} is declared twice in {text!r}")
    return pa.schema(fields)


def spark_name(data_type: Any) -> str:
    """``data_type`` (pyarrow) as the Spark type a parquet column of it is read as: ``decimal(10,2)``,
    ``timestamp`` (with a time zone), ``timestamp_ntz``, ``map<string,bigint>``; pyarrow's name otherwise."""
    import pyarrow as pa

    types = pa.types
    if types.is_decimal(data_type):
        return f"decimal({data_type.precision},{data_type.scale})"
    if types.is_timestamp(data_type):
        return "timestamp" if data_type.tz is not None else "timestamp_ntz"
    if types.is_list(data_type) or types.is_large_list(data_type):
        return f"array<{spark_name(data_type.value_type)}>"
    if types.is_map(data_type):
        return f"map<{spark_name(data_type.key_type)},{spark_name(data_type.item_type)}>"
    if types.is_struct(data_type):
        inner = ",".join(
            f"{data_type.field(i).name}:{spark_name(data_type.field(i).type)}"
            for i in range(data_type.num_fields)
        )
        return f"struct<{inner}>"
    for name, spark in _NAMES.items():
        if data_type == getattr(pa, name)():
            return spark
    return str(data_type)


_NAMES = {
    "bool_": "boolean", "int8": "tinyint", "int16": "smallint", "int32": "int", "int64": "bigint",
    "float32": "float", "float64": "double", "string": "string", "large_string": "string",
    "binary": "binary", "large_binary": "binary", "date32": "date",
}  # fmt: skip


def contains_type(data_type: Any, test: Any) -> bool:
    """True when ``test`` holds for ``data_type`` or a type nested in it."""
    import pyarrow as pa

    if test(data_type):
        return True
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return contains_type(data_type.value_type, test)
    if pa.types.is_map(data_type):
        return contains_type(data_type.key_type, test) or contains_type(data_type.item_type, test)
    if pa.types.is_struct(data_type):
        return any(contains_type(data_type.field(i).type, test) for i in range(data_type.num_fields))
    return False


def truncated(value: Any, data_type: Any) -> bool:
    """True when storing ``value`` as ``data_type`` would drop a float's fraction (pyarrow truncates it)."""
    import pyarrow as pa

    if value is None:
        return False
    if pa.types.is_integer(data_type):
        return isinstance(value, float) and not value.is_integer()
    if (pa.types.is_list(data_type) or pa.types.is_large_list(data_type)) and isinstance(value, list | tuple):
        return any(truncated(item, data_type.value_type) for item in value)
    if pa.types.is_map(data_type) and isinstance(value, dict):
        return any(
            truncated(k, data_type.key_type) or truncated(v, data_type.item_type) for k, v in value.items()
        )
    if pa.types.is_struct(data_type) and isinstance(value, dict):
        fields = {data_type.field(i).name: data_type.field(i).type for i in range(data_type.num_fields)}
        return any(truncated(v, fields[k]) for k, v in value.items() if k in fields)
    return False


def stable_type(data_type: Any) -> Any:
    """An inferred type made the same in every file: decimals ``decimal(38,18)``, timestamps in
    microseconds (UTC when they have a time zone), struct fields that are always null left out."""
    import pyarrow as pa

    if pa.types.is_decimal(data_type):
        return pa.decimal128(38, 18)
    if pa.types.is_timestamp(data_type):
        return pa.timestamp("us", tz="UTC" if data_type.tz is not None else None)
    if pa.types.is_list(data_type):
        return pa.list_(stable_type(data_type.value_type))
    if pa.types.is_struct(data_type):
        fields = [data_type.field(i) for i in range(data_type.num_fields)]
        typed = [pa.field(f.name, stable_type(f.type)) for f in fields if not pa.types.is_null(f.type)]
        return pa.struct(typed) if typed else data_type
    return data_type


def merge_type(known: Any, seen: Any) -> Any:
    """``known`` with the struct fields ``seen`` has and ``known`` lacks added (made stable), nested."""
    import pyarrow as pa

    if pa.types.is_struct(known) and pa.types.is_struct(seen):
        names = {known.field(i).name for i in range(known.num_fields)}
        fields = [
            pa.field(
                f.name,
                merge_type(f.type, seen.field(f.name).type) if seen.get_field_index(f.name) >= 0 else f.type,
            )
            for f in (known.field(i) for i in range(known.num_fields))
        ]
        for i in range(seen.num_fields):
            extra = seen.field(i)
            if extra.name not in names and not pa.types.is_null(extra.type):
                fields.append(pa.field(extra.name, stable_type(extra.type)))
        return pa.struct(fields)
    if pa.types.is_list(known) and pa.types.is_list(seen):
        return pa.list_(merge_type(known.value_type, seen.value_type))
    return known


class _Parser:
    """A recursive-descent parser over the tokens of one DDL string."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[str] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN.match(text, position)
            if match is None:
                raise DDLError(f"unexpected {text[position:].strip()[:20]!r} in {text!r}")
            self.tokens.append(match.group(1))
            position = match.end()
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.lower() != expected):
            wanted = f"{expected!r}" if expected is not None else "more"
            raise DDLError(f"expected {wanted}, found {token!r} in {self.text!r}")
        self.at += 1
        return token

    def fields(self, end: str | None) -> list[Any]:
        """``name [:] type [NOT NULL] [COMMENT '...']`` separated by commas, up to ``end`` (None: the end)."""
        import pyarrow as pa

        fields: list[Any] = []
        while self.peek() != end:
            token = self.take()
            name = token[1:-1].replace("``", "`") if token.startswith("`") else token
            if self.peek() == ":":
                self.take()
            data_type = self.data_type()
            if (self.peek() or "").lower() == "not":
                self.take()
                self.take("null")
            if (self.peek() or "").lower() == "comment":
                self.take()
                self.take()
            fields.append(pa.field(name, data_type))
            if self.peek() == ",":
                self.take()
            elif self.peek() != end:
                raise DDLError(f"expected ',' after column {name!r}, found {self.peek()!r} in {self.text!r}")
        return fields

    def numbers(self) -> list[int]:
        """``(n, ...)`` after a type name, when there is one."""
        if self.peek() != "(":
            return []
        self.take("(")
        values = [int(self.take())]
        while self.peek() == ",":
            self.take()
            values.append(int(self.take()))
        self.take(")")
        return values

    def data_type(self) -> Any:
        import pyarrow as pa

        name = self.take().lower()
        simple = _simple().get(name)
        if simple is not None:
            self.numbers()  # varchar(n), char(n)
            return simple()
        if name in ("decimal", "dec", "numeric"):
            sizes = self.numbers()
            precision = sizes[0] if sizes else 10
            scale = sizes[1] if len(sizes) > 1 else 0
            if not 1 <= precision <= 38 or not 0 <= scale <= precision:
                raise DDLError(f"decimal({precision},{scale}) is not a Spark decimal in {self.text!r}")
            return pa.decimal128(precision, scale)
        if name in ("array", "map", "struct"):
            self.take("<")
            if name == "array":
                data_type = pa.list_(self.data_type())
            elif name == "map":
                key = self.data_type()
                self.take(",")
                data_type = pa.map_(key, self.data_type())
            else:
                data_type = pa.struct(self.fields(end=">"))
            self.take(">")
            return data_type
        raise DDLError(f"unknown type {name!r} in {self.text!r}")


def _timestamp() -> Any:
    import pyarrow as pa

    return pa.timestamp("us", tz="UTC")


def _timestamp_ntz() -> Any:
    import pyarrow as pa

    return pa.timestamp("us")


def _simple() -> dict[str, Any]:
    import pyarrow as pa

    return {
        "boolean": pa.bool_, "bool": pa.bool_, "tinyint": pa.int8, "byte": pa.int8,
        "smallint": pa.int16, "short": pa.int16, "int": pa.int32, "integer": pa.int32,
        "bigint": pa.int64, "long": pa.int64, "float": pa.float32, "real": pa.float32,
        "double": pa.float64, "string": pa.string, "varchar": pa.string, "char": pa.string,
        "binary": pa.binary, "date": pa.date32, "timestamp": _timestamp,
        "timestamp_ltz": _timestamp, "timestamp_ntz": _timestamp_ntz,
    }  # fmt: skip


__all__ = [
    "DDLError",
    "contains_type",
    "merge_type",
    "parse_schema",
    "spark_name",
    "stable_type",
    "truncated",
]
