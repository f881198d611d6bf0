"""A Spark system's outputs: parquet per task per commit, committed with the checkpoint, and
:func:`read_output` (docs/architecture.md §13).

A task sending to ``SystemStream("<s>", "<t>")`` of a Spark system has its messages buffered (per task);
``flush(task)``, which the container calls before every checkpoint, writes them as one parquet file into
the stream's directory of the task's generation (``<output root>/<t>/<job>/g<N>/``, :mod:`.generations`)
— to a hidden temporary name, fsynced, then renamed into place — and nothing when nothing was sent. A file
counts as output only once the checkpoint covering it is written (:mod:`.commits`: the directory's
``_spark_metadata`` log, which a plain ``spark.read.parquet`` of the directory honours): :func:`read_output`
reads committed files only, so the files of an attempt that died before its checkpoint are never read
(exactly once), and a job that starts over writes a new generation that replaces its earlier output. File
names never collide across restarts: ``<task>.<ns since epoch>-<random>.parquet``.

Columns and their types: :mod:`.output_types` (a dict message's fields, else ``value``; ``key`` only when
the message is not a dict or the stream's ``spark.schema`` declares it; each column keeps its declared or
first-seen type). A message that cannot be stored is a BadMessageError naming stream, task, column and value:
it fails the job, and no runner retries it.

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

from samza_nb.config.key_spec import parse_int
from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.systems.spark.inputs.manifest import fsync_directory
from samza_nb.systems.spark.outputs.commits import OutputCommits, committed_files, file_prefix
from samza_nb.systems.spark.outputs.generations import current_output_directory, current_stream_directories
from samza_nb.systems.spark.outputs.merge import DEFAULT_TARGET_ROWS
from samza_nb.systems.spark.outputs.output_types import (
    _KnownTypes,
    _spark_type,
    _type_conflict,
    declared_schemas,
)
from samza_nb.systems.spark.outputs.schema_change import check_declared_types
from samza_nb.systems.spark.settings import job_key, output_root

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.api.streams import OutgoingMessageEnvelope
    from samza_nb.config import Config


def target_file_rows(config: Config, system: str) -> int:
    """``systems.<s>.spark.output.target.file.rows``: files of fewer rows are merged at compaction."""
    key = f"systems.{system}.spark.output.target.file.rows"
    return parse_int(key, config[key]) if key in config else DEFAULT_TARGET_ROWS


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
        self._schemas = _KnownTypes(system, config)
        self._commits = OutputCommits(
            output_root(config, system), job_key(config), target_file_rows(config, system)
        )
        self._types_checked = False

    async def start(self) -> None:
        """Learn the column types of the files already in the current generation's directories (footers)."""
        directories = current_stream_directories(output_root(self.config, self.system), job_key(self.config))
        await asyncio.to_thread(self._schemas.seed, directories)

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
        """Settle what task ``source`` left uncommitted when its container stopped (see :mod:`.commits`);
        before the first task that resumes, a ConfigError when a declared column's type changed under its
        output (:mod:`.schema_change`)."""
        if checkpoint is not None and not reset and not self._types_checked:
            self._types_checked = True
            declared = declared_schemas(self.config, self.system)
            root, job = output_root(self.config, self.system), job_key(self.config)
            await asyncio.to_thread(check_declared_types, self.system, declared, root, job)
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
        directory = self._commits.stream_directory(task, stream)
        table = self._schemas.table(task, stream, directory, buffer)
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


def read_output(spark: Any, stream: str, config: Config, *, system: str = "spark") -> Any:
    """The committed messages the job (``job.name`` and ``job.id`` of ``config``) wrote to
    ``SystemStream(system, stream)``, as a DataFrame of ``spark`` (schemas of the files merged): the files
    the current generation's ``_spark_metadata`` log lists (commits whose checkpoint was written).
    A SamzaError naming the directory when nothing is committed yet, and a one-line SamzaError naming the
    directory and the column when the files' column types conflict (Spark cannot merge them) or Spark
    cannot read them."""
    directory = current_output_directory(config, system, stream)
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


def _one_line(exc: BaseException) -> str:
    """The gist of a (Py4J or PySpark) exception in one line: its last ``[ERROR_CLASS] ...`` line, else its
    first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    found = [(line, re.search(r"\[[A-Z][A-Z0-9_.]+\]", line)) for line in lines]
    classed = [line[match.start() :] for line, match in found if match is not None]
    text = classed[-1] if classed else (lines[0] if lines else type(exc).__name__)
    text = text.split(" Please ", 1)[0]
    return text if len(text) <= 400 else text[:397] + "..."


__all__ = ["SparkSinkProducer", "file_prefix", "read_output", "target_file_rows"]
