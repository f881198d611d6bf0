"""A changed ``systems.<s>.streams.<t>.spark.schema`` under output a resumed task continues: refused at start.

A task that resumes from its checkpoint keeps writing into the current output generation, whose committed
files have the column types the schema declared when they were written. A declaration that changed since
(``n int`` to ``n bigint``) would write files whose column types differ from the earlier ones, which no
reader merges (Spark's ``mergeSchema`` fails on int vs bigint). So before a resumed task writes, each
declared column is compared with its type in the committed files of the current generation; a difference
is one ConfigError naming the key, the stream, the column, both types and what to do. A new generation
(a reset, a new ``job.id``, a task starting from no checkpoint) starts with no files, so it is never
refused. Struct columns may gain fields (Spark merges those); every other difference is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from samza_nb.errors import ConfigError
from samza_nb.systems.spark.outputs.commits import committed_files
from samza_nb.systems.spark.outputs.ddl import spark_name


def check_declared_types(system: str, declared: Mapping[str, Any], root: Path, job: str) -> None:
    """A ConfigError (see the module) when a column ``declared`` (per stream, a pyarrow schema) has another
    type in a committed file of the current generation of ``job`` (``<name>-<id>``) under output root
    ``root``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for stream, schema in sorted(declared.items()):
        wanted = {field.name: field.type for field in schema}
        for path in reversed(committed_files(root, job, stream)):  # the newest first
            try:
                found = pq.read_schema(path)
            except (OSError, pa.ArrowException):
                continue
            for field in found:
                new = wanted.get(field.name)
                if new is not None and _differs(field.type, new):
                    raise _changed(system, stream, field.name, field.type, new, path)


def _differs(old: Any, new: Any) -> bool:
    """True when a file of type ``old`` and one of ``new`` cannot be read together (see the module)."""
    import pyarrow as pa

    types = pa.types
    if types.is_null(old) or types.is_null(new):
        return False
    if types.is_struct(old) and types.is_struct(new):
        return any(
            _differs(old.field(name).type, new.field(name).type)
            for name in (old.field(i).name for i in range(old.num_fields))
            if new.get_field_index(name) >= 0
        )
    if types.is_list(old) and types.is_list(new):
        return _differs(old.value_type, new.value_type)
    if types.is_map(old) and types.is_map(new):
        return _differs(old.key_type, new.key_type) or _differs(old.item_type, new.item_type)
    return spark_name(old) != spark_name(new)


def _changed(system: str, stream: str, column: str, old: Any, new: Any, path: Path) -> ConfigError:
    key = f"systems.{system}.streams.{stream}.spark.schema"
    return ConfigError(
        f"{key} declares column {column!r} as {spark_name(new)}, but the output this job resumes has it as "
        f"{spark_name(old)} ({path}): no reader merges the two; declare {spark_name(old)} again, or start a "
        "new output generation (samza-nb reset, reset.offset, or a new job.id)",
        key=key,
    )


__all__ = ["check_declared_types"]
