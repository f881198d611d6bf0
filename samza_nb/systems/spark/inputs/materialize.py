"""Writing a bounded input once, on the driver: :func:`prepare_input` (docs/architecture.md §13).

``<base>/<job.name>-<job.id>/spark-input/<system>/<stream>/`` holds ``manifest.json`` and, when Spark wrote
the rows, the
parquet files under ``data/``. Configured parquet without ``spark.partitions`` is read where it is (one
partition per file, sorted by path; no Spark at all). Anything else is written by Spark: as the DataFrame
is partitioned (partition n = the n-th part file by part number: Spark writes none for an empty
partition), or, with ``partitions`` N (a small configured parquet input: in the driver,
:mod:`.local_write`), partition of a row = :class:`.keys.RowPartitioner` (Kafka's ``key_partition`` of
the key bytes), rows sorted by the timestamp column within each partition, every one
of the N partitions present (an empty one has no file and 0 rows).

A fingerprint tells whether the source changed since it was written, the same in every driver process: for
a registered DataFrame its optimized plan as text (expression ids taken out) and schema, the files it reads
(path, size, mtime) and, for a plan over an RDD or local rows, a hash of its rows;
for a configured path the format and each file's path, size and mtime; and the column roles and partitions.
A changed source is
rewritten unless a consumer has read the old rows (the ``read`` marker) and ``reset.offset`` is not set:
then checkpointed row indexes would point at other rows, which is a SamzaError naming the stream.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import re
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.errors import ConfigError, SamzaError
from samza_nb.systems.spark.inputs.keys import RowPartitioner, key_serde
from samza_nb.systems.spark.inputs.local_write import partition_locally, writes_locally
from samza_nb.systems.spark.inputs.manifest import (
    Manifest,
    PartitionFiles,
    fsync_directory,
    not_written,
    read_manifest,
    was_read,
    write_manifest,
)
from samza_nb.systems.spark.session import worker_python_error
from samza_nb.systems.spark.settings import (
    READ_ONLY_INPUTS_ENV,
    SHARED_DIR_KEY,
    StreamSettings,
    input_directory,
    reset_offset,
    stream_key,
    stream_settings,
)

if TYPE_CHECKING:
    from samza_nb.config import Config

PARTITION_COLUMN: Final = "__samza_partition"
"""The column the writer partitions the files by (a directory level, not a column of the files)."""

_PART_NUMBER = re.compile(r"^part-(\d+)")


def prepare_input(config: Config, system: str, stream: str) -> Manifest:
    """The manifest of bounded ``stream``, writing the input first when this process has its source and
    it is missing or changed (see the module). Without a source here (a container's process, an
    executor) a missing manifest is a SamzaError naming the stream; a container the Spark runner started
    (:data:`READ_ONLY_INPUTS_ENV`) never writes (nor starts a Spark application): a missing manifest is a
    ConfigError naming ``job.shared.dir`` and the host. A configured input's fingerprint needs
    no Spark: Spark starts only when it must be (re)written."""
    settings = stream_settings(config, system, stream)
    if settings.streaming:
        raise SamzaError(
            f"Spark stream {system}.{stream} is a streaming DataFrame: it is fed, not written once"
        )
    directory = input_directory(config, system, stream)
    existing = read_manifest(directory)
    if READ_ONLY_INPUTS_ENV in os.environ:  # a container on an executor: the driver wrote it
        if existing is None:
            raise _not_seen(config, system, stream, directory)
        return existing
    if not settings.has_source:
        if existing is None:
            raise not_written(system, stream, directory)
        return existing
    with _locked(directory):
        source = _Source(config, settings)
        fingerprint = source.fingerprint()
        existing = read_manifest(directory)
        if existing is not None and existing.fingerprint == fingerprint:
            return existing
        if existing is not None and was_read(directory) and not reset_offset(config, system, stream):
            raise SamzaError(
                f"the DataFrame of stream {stream!r} changed since job {config.job_name()!r} "
                f"(job.id {config.job_id()!r}) read it; its checkpointed offsets are row indexes of the "
                f"old rows: set systems.{system}.streams.{stream}.samza.reset.offset = true to start over, "
                "or use a new job.id"
            )
        return source.write(directory, fingerprint)


class _Source:
    """The source of one bounded input: a registered DataFrame, configured files read in place, or
    configured files Spark reads."""

    def __init__(self, config: Config, settings: StreamSettings) -> None:
        self.config = config
        self.settings = settings
        self.files = _source_files(settings) if settings.path is not None else []
        self._frame: Any = None

    def frame(self) -> Any:
        """The DataFrame (the registered one, or Spark's read of the configured path)."""
        if self._frame is None:
            settings = self.settings
            if settings.frame is not None:
                self._frame = settings.frame.frame
            else:
                from samza_nb.systems.spark.session import spark_session

                spark = spark_session(self.config)
                self._frame = spark.read.format(settings.format).load(settings.path)
                settings.check_columns(list(self._frame.columns), f"{settings.format} {settings.path!r}")
        return self._frame

    def fingerprint(self) -> str:
        """A hash of what the input's rows are made from (see :func:`_frame_parts`); for a configured path,
        the format and each file's path, size and mtime, computed without Spark."""
        settings = self.settings
        parts: dict[str, Any] = {"roles": settings.roles}
        if settings.frame is not None:
            parts.update(_frame_parts(settings.frame.frame))
        elif settings.path is not None:
            parts["format"] = settings.format
            parts["files"] = _file_stats(str(path) for path in self.files)
        text = json.dumps(parts, sort_keys=True, default=str)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def write(self, directory: Path, fingerprint: str) -> Manifest:
        """Write the input into ``directory`` (replacing what is there) and return its manifest."""
        settings = self.settings
        staging = directory.with_name(f".{directory.name}.tmp-{uuid.uuid4().hex}")
        staging.mkdir(parents=True)
        try:
            if writes_locally(self.config, settings, self.files):
                serde = key_serde(self.config, settings.system, settings.stream)
                partitions = partition_locally(
                    settings, serde, self.files, staging / "data", PARTITION_COLUMN
                )
            else:
                write = self._write_with_spark if settings.needs_spark else self._files_in_place
                partitions = write(staging)
            _check_timestamp(settings, [staging / f for p in partitions for f in p.files if p.rows])
            write_manifest(Manifest(staging, settings.stream, fingerprint, settings.roles, tuple(partitions)))
            _swap(staging, directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        manifest = read_manifest(directory)
        assert manifest is not None
        return manifest

    def _files_in_place(self, staging: Path) -> list[PartitionFiles]:
        import pyarrow.parquet as pq

        if not self.files:
            raise ConfigError(
                f"{stream_key(self.settings.system, self.settings.stream, 'path')} = {self.settings.path!r} "
                "holds no files",
                key=stream_key(self.settings.system, self.settings.stream, "path"),
            )
        try:
            schema = pq.read_schema(self.files[0])
            rows = [pq.ParquetFile(path).metadata.num_rows for path in self.files]
        except Exception as exc:
            raise SamzaError(f"cannot read parquet under {self.settings.path!r}: {exc}") from None
        self.settings.check_columns(list(schema.names), f"parquet file {str(self.files[0])!r}")
        return [PartitionFiles((str(path),), count) for path, count in zip(self.files, rows, strict=True)]

    def _write_with_spark(self, staging: Path) -> list[PartitionFiles]:
        settings = self.settings
        frame = self.frame()
        if settings.timestamp is not None:
            kind = dict(frame.dtypes)[settings.timestamp]
            if not (
                kind.startswith(("timestamp", "date")) or kind in ("tinyint", "smallint", "int", "bigint")
            ):
                raise _timestamp_error(settings, kind)
        data = staging / "data"
        try:
            return self._spark_write(frame, data)
        except SamzaError:
            raise
        except Exception as exc:  # Spark's errors carry a worker's whole traceback: keep its last line
            missing = worker_python_error(str(exc))
            if missing is not None:
                raise missing from None
            lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
            raise SamzaError(
                f"writing the input of stream {settings.system}.{settings.stream} with Spark failed: "
                f"{type(exc).__name__}: {lines[-1] if lines else exc!r}"
            ) from None

    def _spark_write(self, frame: Any, data: Path) -> list[PartitionFiles]:
        settings = self.settings
        if settings.partitions is None:
            frame.write.parquet(str(data))
            written = [_partition_of(data, [path]) for path in _part_files(data)]
            return written or [PartitionFiles((), 0)]  # no rows at all: one empty partition
        from pyspark.sql import functions

        partitioner = RowPartitioner(
            settings.partitions, key_serde(self.config, settings.system, settings.stream)
        )
        partition_of = functions.udf(partitioner, "int", useArrow=False)
        out = frame.withColumn(PARTITION_COLUMN, partition_of(functions.col(f"`{settings.key}`")))
        out = out.repartition(settings.partitions, PARTITION_COLUMN)
        order = [PARTITION_COLUMN] + ([f"`{settings.timestamp}`"] if settings.timestamp else [])
        out.sortWithinPartitions(*order).write.partitionBy(PARTITION_COLUMN).parquet(str(data))
        return [
            _partition_of(data, _part_files(data / f"{PARTITION_COLUMN}={n}"))
            for n in range(settings.partitions)
        ]


def _frame_parts(frame: Any) -> dict[str, Any]:
    """What identifies a registered DataFrame's rows, the same in every driver process: its optimized
    plan as text with Spark's per-session expression ids taken out, and its schema (``semanticHash`` is
    per session: the same ``spark.read.parquet(dir)`` hashes differently in a new process); the files it
    reads, with their size and mtime (a plan over a directory reads the same when files are added or
    rewritten); and, when the plan holds rows its text does not show (an RDD: ``createDataFrame`` of Python
    rows, ``rdd.toDF``; a local relation), a hash of the rows themselves, in order."""
    plan = _plan_text(frame)
    parts: dict[str, Any] = {"plan": plan, "schema": frame.schema.json()}
    try:
        parts["files"] = _file_stats(frame.inputFiles())
    except Exception as exc:  # a plan Spark cannot list the files of: its rows decide
        parts["files"] = f"unlisted: {type(exc).__name__}"
    if plan is None or _ROW_LEAVES.search(plan) or isinstance(parts["files"], str):
        parts["plan"] = None  # the text names the rows' holder, not the rows
        parts["rows"] = _content_hash(frame)
    return parts


_EXPRESSION_ID = re.compile(r"#\d+L?\b")
_ROW_LEAVES = re.compile(r"\b(LogicalRDD|LocalRelation|ExternalRDD)\b")


def _plan_text(frame: Any) -> str | None:
    """The optimized logical plan as text, expression ids (``a#12L``) taken out; None when it cannot be
    read (then the rows are hashed)."""
    try:
        text = str(frame._jdf.queryExecution().optimizedPlan().toString())
    except Exception:
        return None
    return _EXPRESSION_ID.sub("#", text)


def _content_hash(frame: Any) -> list[Any]:
    """(row count, sum of a 31-bit hash of each row with its partition and position): one Spark job."""
    from pyspark.sql import functions as F

    row = F.to_json(F.struct(*[F.col(f"`{name}`") for name in frame.columns]))
    position = (F.spark_partition_id(), F.monotonically_increasing_id())
    hashed = F.pmod(F.xxhash64(*position, row), F.lit(2147483647))
    rows = frame.select(hashed.alias("h"))  # projected first: an aggregate refuses non-deterministic input
    first = rows.agg(F.count(F.lit(1)), F.sum(F.col("h").cast("decimal(38,0)"))).first()
    return [int(first[0]), str(first[1])]


def _file_stats(paths: Any) -> list[list[Any]]:
    """``[path, size, mtime_ns]`` of each path (a ``file:`` URI counts as its path); a path that is not a
    local file (another filesystem) only by its name."""
    stats: list[list[Any]] = []
    for raw in sorted(paths):
        local = raw.removeprefix("file://").removeprefix("file:")
        try:
            stat = os.stat(local)
        except OSError:
            stats.append([raw])
        else:
            stats.append([raw, stat.st_size, stat.st_mtime_ns])
    return stats


def _partition_of(data: Path, files: list[Path]) -> PartitionFiles:
    """A partition of files Spark wrote under ``data`` (names relative to the input directory)."""
    import pyarrow.parquet as pq

    rows = sum(pq.ParquetFile(path).metadata.num_rows for path in files)
    return PartitionFiles(tuple(str(path.relative_to(data.parent)) for path in files), rows)


def _part_files(directory: Path) -> list[Path]:
    """The parquet part files Spark wrote into ``directory``, by part number (none when it is missing)."""
    if not directory.is_dir():
        return []
    found = []
    for path in directory.iterdir():
        match = _PART_NUMBER.match(path.name)
        if match and path.is_file():
            found.append((int(match.group(1)), path.name, path))
    return [path for _, _, path in sorted(found)]


def _source_files(settings: StreamSettings) -> list[Path]:
    """The files of a configured path (a file, a directory searched recursively, or a glob), sorted;
    names starting with ``.`` or ``_`` (Spark's markers) are left out. A path that matches nothing that
    exists is a ConfigError naming the key."""
    key = stream_key(settings.system, settings.stream, "path")
    raw = os.path.expanduser(str(settings.path))
    if glob.has_magic(raw):
        candidates = [Path(p) for p in glob.glob(raw, recursive=True)]
    else:
        candidates = [Path(raw)]
        if not candidates[0].exists():
            raise ConfigError(f"{key} = {settings.path!r} does not exist", key=key)
    files: list[Path] = []
    for candidate in candidates:
        if candidate.is_dir():
            for root, dirs, names in os.walk(candidate):
                dirs[:] = [d for d in dirs if not d.startswith((".", "_")) or "=" in d]
                files.extend(Path(root) / n for n in names if not n.startswith((".", "_")))
        elif candidate.is_file():
            files.append(candidate)
    return sorted(path.absolute() for path in files)


def _check_timestamp(settings: StreamSettings, files: list[Path]) -> None:
    """A ConfigError naming the timestamp role's key when its column is not a timestamp, date or integer."""
    if settings.timestamp is None or not files:
        return
    import pyarrow as pa
    import pyarrow.parquet as pq

    kind = pq.read_schema(files[0]).field(settings.timestamp).type
    if not (pa.types.is_timestamp(kind) or pa.types.is_date(kind) or pa.types.is_integer(kind)):
        raise _timestamp_error(settings, str(kind))


def _not_seen(config: Config, system: str, stream: str, directory: Path) -> ConfigError:
    """The error of a container that does not see the input the driver wrote before it started."""
    import socket

    shared = (config.get_str(SHARED_DIR_KEY) or "").strip() or "unset"
    return ConfigError(
        f"Spark stream {system}.{stream}: the driver wrote its input to {directory} before the containers "
        f"started, and host {socket.gethostname()} does not see it there: {SHARED_DIR_KEY} ({shared}) must "
        "be the same directory on the driver and every worker",
        key=SHARED_DIR_KEY,
    )


def _timestamp_error(settings: StreamSettings, kind: str) -> ConfigError:
    return ConfigError(
        f"{settings.role_key('timestamp')} = {settings.timestamp!r} is a column of type {kind}: "
        "expected a timestamp, a date or an integer (epoch ms)",
        key=settings.role_key("timestamp"),
    )


def _swap(staging: Path, directory: Path) -> None:
    """Put ``staging`` in the place of ``directory`` (removing what was there)."""
    old = directory.with_name(f".{directory.name}.old-{uuid.uuid4().hex}")
    if directory.exists():
        os.replace(directory, old)
    os.replace(staging, directory)
    fsync_directory(directory.parent)
    shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """Hold an exclusive lock on writing ``directory`` (across the processes of this machine)."""
    directory.parent.mkdir(parents=True, exist_ok=True)
    with open(directory.with_name(f".{directory.name}.lock"), "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)


__all__ = ["PARTITION_COLUMN", "prepare_input"]
