"""A Spark system's outputs: parquet per task per commit, committed with the checkpoint, and
:func:`read_output` (docs/architecture.md §13).

A task sending to ``SystemStream("<s>", "<t>")`` of a Spark system has its messages buffered (per task);
``flush(task)``, which the container calls before every checkpoint, writes them as one parquet file under
``systems.<s>.spark.output.dir`` (default ``<job.shared.dir>/<job.name>-<job.id>/spark-output``) ``/<t>/``
— to a hidden temporary name, fsynced, then renamed into place — and nothing when nothing was sent. A file
counts as output only once the checkpoint covering it is written (:mod:`.commits`: a record of each
commit's files beside them): :func:`read_output` reads committed files only, so the files of an attempt
that died before its checkpoint are never read (exactly once), and a task whose inputs start over
(``reset.offset``) writes a new generation that replaces its earlier output. File names sort by task, then
in commit order, and never collide across restarts: ``<task>.<ns since epoch>-<random>.parquet``.

Columns: ``key`` when any message of the file has a key; a dict message's fields (when every message is a
dict), else ``value``. A message pyarrow cannot store is a SystemProducerError naming stream and task.

Files of a stream must agree on each column's type for Spark to merge their schemas. A column that is null in
every row of a file (an optional field no message of that commit set) has no type of its own: it takes the
type the producer knows for that column of that stream — from the files it wrote, and from the footers of
the files already in the stream's directory (read at ``start()``, and again for files it has not seen when
such a column has no known type) — and is left out of the file when no type is known (Spark fills a missing
column with null); a file only of such columns keeps them. :func:`read_output` reports columns whose types
still conflict (ints in one file, floats in another) as one line naming the directory and the column.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import secrets
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.spark.commits import OutputCommits, committed_files, safe_name
from samza_nb.systems.spark.manifest import fsync_directory
from samza_nb.systems.spark.settings import job_key, output_directory, output_root

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.api.streams import OutgoingMessageEnvelope
    from samza_nb.config import Config


def file_prefix(task: str) -> str:
    """``task`` made safe as the start of a file name Spark reads (no leading ``.`` or ``_``)."""
    return safe_name(task)


class _Buffer:
    """What one task sent to one stream since its last flush."""

    __slots__ = ("keys", "messages")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.messages: list[Any] = []


class SparkSinkProducer:
    """Writes what each task sends as parquet per task per commit, committed with the task's checkpoint
    (a :class:`~samza_nb.systems.base.CommittingProducer`; see the module); thread-safe sends."""

    def __init__(self, system: str, config: Config) -> None:
        self.system = system
        self.config = config
        self._buffers: dict[tuple[str, str], _Buffer] = {}
        self._lock = threading.Lock()
        self._last_stamp = 0
        self._schemas = _KnownTypes()
        self._commits = OutputCommits(output_root(config, system), job_key(config))

    async def start(self) -> None:
        """Learn the column types of the files already in the system's output directories (their footers)."""
        root = output_directory(self.config, self.system, "_").parent
        await asyncio.to_thread(self._schemas.seed, root)

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Buffer ``envelope`` for ``source``'s next file of its stream."""
        key = (source, envelope.system_stream.stream)
        with self._lock:
            buffer = self._buffers.get(key)
            if buffer is None:
                buffer = self._buffers[key] = _Buffer()
            buffer.keys.append(envelope.key)
            buffer.messages.append(envelope.message)

    async def recover(self, source: str, checkpoint: Checkpoint | None, *, reset: bool) -> None:
        """Settle what task ``source`` left uncommitted when its container stopped (see :mod:`.commits`)."""
        await asyncio.to_thread(self._commits.recover, source, checkpoint, reset=reset)

    async def prepare_commit(self, source: str, checkpoint: Checkpoint) -> None:
        """Record the files ``source`` flushed since its last commit as pending with ``checkpoint``."""
        await asyncio.to_thread(self._commits.prepare, source, checkpoint)

    async def commit_done(self, source: str, checkpoint: Checkpoint) -> None:
        """``checkpoint`` was written: the pending files of ``source`` are committed output."""
        await asyncio.to_thread(self._commits.committed, source, checkpoint)

    async def flush(self, source: str) -> None:
        """Write one file per stream ``source`` sent to since its last flush (nothing when nothing was)."""
        with self._lock:
            taken = [(stream, self._buffers.pop((task, stream)))
                     for task, stream in list(self._buffers) if task == source]  # fmt: skip
        for stream, buffer in taken:
            await asyncio.to_thread(self._write, source, stream, buffer)

    def _write(self, task: str, stream: str, buffer: _Buffer) -> Path:
        directory = output_directory(self.config, self.system, stream)
        table = self._schemas.typed(stream, directory, _table(task, self.system, stream, buffer))
        name = f"{file_prefix(task)}.{self._stamp():020d}-{secrets.token_hex(4)}.parquet"
        path = directory / name
        temporary = directory / f".{name}.tmp"
        try:
            import pyarrow.parquet as pq

            directory.mkdir(parents=True, exist_ok=True)
            with temporary.open("wb") as file:
                pq.write_table(table, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
            self._schemas.learn(stream, table.schema, path.name)
            fsync_directory(directory)
            self._commits.written(task, stream, path.name)
        except OSError as exc:
            temporary.unlink(missing_ok=True)
            raise SystemProducerError(
                f"cannot write {self.system}.{stream} output of task {task!r} to {str(path)!r}: {exc}"
            ) from None
        return path

    def _stamp(self) -> int:
        """Nanoseconds since the epoch, strictly increasing in this producer (commit order)."""
        with self._lock:
            self._last_stamp = max(time.time_ns(), self._last_stamp + 1)
            return self._last_stamp

    async def stop(self) -> None:
        """Drop what tasks sent after their last commit: no checkpoint covers it, so it is not output (the
        tasks' next start processes its input again)."""
        with self._lock:
            dropped = sum(len(buffer.messages) for buffer in self._buffers.values())
            self._buffers.clear()
        if dropped:
            log.info("Spark output %s: %d messages sent after the last commit dropped", self.system, dropped)


class _KnownTypes:
    """Per stream: the type of each column, from files written or read (the first null-free type seen), and
    the names of the files already looked at. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._types: dict[str, dict[str, Any]] = {}
        self._seen: dict[str, set[str]] = {}

    def seed(self, root: Path) -> None:
        """Read the footers of the files under every stream directory of ``root``."""
        if root.is_dir():
            for directory in sorted(root.iterdir()):
                if directory.is_dir():
                    self._read_new(directory.name, directory)

    def learn(self, stream: str, schema: Any, name: str) -> None:
        """Take the column types of the file ``name`` of ``stream`` (written or read)."""
        with self._lock:
            self._seen.setdefault(stream, set()).add(name)
            known = self._types.setdefault(stream, {})
            for field in schema:
                if field.name not in known and not _has_null(field.type):
                    known[field.name] = field.type

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


def _table(task: str, system: str, stream: str, buffer: _Buffer) -> Any:
    """The messages of ``buffer`` as a pyarrow table (see the module for the columns)."""
    import pyarrow as pa

    messages = buffer.messages
    columns: dict[str, Any] = {}
    try:
        if any(key is not None for key in buffer.keys):
            columns["key"] = pa.array(buffer.keys)
        if messages and all(isinstance(message, dict) for message in messages):
            fields = pa.Table.from_pylist(messages)
            if "key" in columns and "key" in fields.column_names:
                raise SystemProducerError(
                    f"{system}.{stream} output of task {task!r}: messages with keys cannot have a field 'key'"
                )
            for name in fields.column_names:
                columns[name] = fields.column(name)
        else:
            columns["value"] = pa.array(messages)
        return pa.table(columns)
    except SamzaError:
        raise
    except Exception as exc:
        raise SystemProducerError(
            f"{system}.{stream} output of task {task!r} cannot be stored as parquet: {exc}"
        ) from None


def read_output(spark: Any, stream: str, config: Config, *, system: str = "spark") -> Any:
    """The committed messages the job (``job.name`` and ``job.id`` of ``config``) wrote to
    ``SystemStream(system, stream)``, as a DataFrame of ``spark`` (schemas of the files merged): each
    task's newest generation, files of commits whose checkpoint was written only (see :mod:`.commits`).
    A SamzaError naming the directory when nothing is committed yet, and a one-line SamzaError naming the
    directory and the column when the files' column types conflict (Spark cannot merge them) or Spark
    cannot read them."""
    directory = output_directory(config, system, stream)
    files = committed_files(output_root(config, system), job_key(config), stream)
    if not files:
        raise SamzaError(
            f"Spark output {system}.{stream} of job {job_key(config)} has no committed files yet in "
            f"{directory}"
        )
    conflict = _type_conflict(files, _spark_type)
    if conflict is not None:
        raise SamzaError(
            f"Spark output {system}.{stream} in {directory}: {conflict}; Spark cannot merge them"
        )
    try:
        return spark.read.option("mergeSchema", "true").parquet(*(str(path) for path in files))
    except Exception as exc:
        conflict = _type_conflict(files, str)
        where = f": {conflict}" if conflict is not None else ""
        raise SamzaError(
            f"Spark cannot read output {system}.{stream} in {directory}{where}: {_one_line(exc)}"
        ) from None


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


def _one_line(exc: BaseException) -> str:
    """The gist of a (Py4J or PySpark) exception in one line: its last ``[ERROR_CLASS] ...`` line, else its
    first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    found = [(line, re.search(r"\[[A-Z][A-Z0-9_.]+\]", line)) for line in lines]
    classed = [line[match.start() :] for line, match in found if match is not None]
    text = classed[-1] if classed else (lines[0] if lines else type(exc).__name__)
    text = text.split(" Please ", 1)[0]
    return text if len(text) <= 400 else text[:397] + "..."


__all__ = ["SparkSinkProducer", "file_prefix", "read_output"]
