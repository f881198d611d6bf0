"""A directory's commit log in Spark's own ``_spark_metadata`` format: the files a plain
``spark.read.parquet(<directory>)`` lists (Spark's file sink writes the same log; its reader,
``MetadataLogFileIndex``, lists only the files in it when ``<directory>/_spark_metadata`` exists).

The log is a directory of batch files named by batch id (``0``, ``1``, …, no extension). Each holds ``v1``,
then one JSON ``SinkFileStatus`` per line (``path`` a full URI such as ``file:/out/a.parquet``, ``size``,
``isDir``, ``modificationTime``, ``blockReplication``, ``blockSize``, ``action`` ``"add"``). Every
:data:`COMPACT_INTERVAL`-th batch (ids ``k`` with ``(k + 1) % interval == 0``) is ``<k>.compact`` and
holds the whole live set: every entry of the batches up to ``k``. Spark's reader reads the newest compact
file and the batches after it, and requires batch ids to be consecutive.

Several processes (containers on several hosts sharing the directory) append to one log: a batch file is
written whole to a hidden temporary name and linked to its id with ``os.link``, which fails when the id
exists (create-if-absent, atomic on a shared POSIX mount); the writer then tries the next id. An id is
created only after the id before it exists, so ids never leave a gap, and the compact file at ``k`` (whose
writer read every batch below ``k``, all present) covers ids ``<= k`` exactly once whoever wins ``k``.
After writing a compact file its writer deletes the batch files older than the compact file before it
(Spark's log retention keeps from the previous compact on, as here), so the log holds at most about two
intervals of files.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote, unquote, urlsplit

from samza_nb.errors import SamzaError
from samza_nb.systems.spark.inputs.manifest import fsync_directory

METADATA_DIR: Final = "_spark_metadata"
"""The log's directory under the directory it describes (the name Spark's reader looks for)."""
COMPACT_INTERVAL: Final = 10
"""Batches per compact file: Spark's default ``spark.sql.streaming.fileSink.log.compactInterval`` (a
reader derives the interval from the compact files it finds; this one keeps two of them)."""
COMPACT_SUFFIX: Final = ".compact"
VERSION_LINE: Final = "v1"
_ATTEMPTS: Final = 10_000


@dataclass(frozen=True)
class LogEntry:
    """One ``SinkFileStatus`` of the log: a committed file (``action`` ``"add"``)."""

    path: str
    """A full URI (``file:/...``), as Spark writes and reads it."""
    size: int
    modification_time: int
    action: str = "add"

    def to_json(self) -> str:
        """The entry as Spark's JSON line (the fields in Spark's order)."""
        return json.dumps(
            {
                "path": self.path,
                "size": self.size,
                "isDir": False,
                "modificationTime": self.modification_time,
                "blockReplication": 1,
                "blockSize": 33554432,
                "action": self.action,
            },
            separators=(",", ":"),
        )

    @property
    def local_path(self) -> Path:
        """The file as a local path (the URI's path, unquoted)."""
        return Path(unquote(urlsplit(self.path).path))


def file_uri(path: Path) -> str:
    """``path`` as the URI Spark's log keeps (Hadoop's ``file:/a/b`` form, percent-encoded)."""
    return "file:" + quote(str(path.absolute()), safe="/")


def entry_for(path: Path) -> LogEntry:
    """The log entry of the written file ``path`` (its size and modification time)."""
    stat = path.stat()
    return LogEntry(file_uri(path), stat.st_size, stat.st_mtime_ns // 1_000_000)


def is_compaction(batch: int, interval: int = COMPACT_INTERVAL) -> bool:
    """True when batch ``batch`` is a compact file (Spark's rule: ``(batch + 1) % interval == 0``)."""
    return (batch + 1) % interval == 0


def batch_name(batch: int, interval: int = COMPACT_INTERVAL) -> str:
    """The file name of batch ``batch``: ``<batch>`` or ``<batch>.compact``."""
    return f"{batch}{COMPACT_SUFFIX}" if is_compaction(batch, interval) else str(batch)


class SparkMetadataLog:
    """The ``_spark_metadata`` log of one directory (see the module); safe to use from several processes."""

    def __init__(self, directory: Path, interval: int = COMPACT_INTERVAL) -> None:
        self.directory = directory
        self.log_directory = directory / METADATA_DIR
        self.interval = interval

    def batches(self) -> list[int]:
        """The batch ids present, ascending."""
        if not self.log_directory.is_dir():
            return []
        found = []
        for path in self.log_directory.iterdir():
            number = path.name.removesuffix(COMPACT_SUFFIX)
            if number.isdigit():
                found.append(int(number))
        return sorted(found)

    def latest(self) -> int | None:
        """The newest batch id, None for an empty log."""
        batches = self.batches()
        return batches[-1] if batches else None

    def live(self) -> list[LogEntry]:
        """Every committed file: the newest compact file's entries and those of the batches after it (the
        set Spark's reader lists), in commit order. Retries when a writer's retention removed a batch
        while it was read."""
        for _ in range(_ATTEMPTS):
            latest = self.latest()
            if latest is None:
                return []
            try:
                return self._entries_up_to(latest)
            except FileNotFoundError:
                continue
        raise SamzaError(f"Spark output log {str(self.log_directory)!r} keeps changing while it is read")

    def append(
        self, entries: Sequence[LogEntry], merge: Callable[[list[LogEntry]], list[LogEntry]] | None = None
    ) -> int:
        """Commit ``entries`` as the next batch (create-if-absent, the next id on conflict); its id. A
        compaction batch holds the live set, passed through ``merge`` when given (which may replace small
        files by merged ones it wrote: the replaced ones are deleted once the compact file is in place),
        plus ``entries``."""
        self.log_directory.mkdir(parents=True, exist_ok=True)
        batch = self._next_free(-1)
        for _ in range(_ATTEMPTS):
            if is_compaction(batch, self.interval):
                try:
                    prior = self._entries_before(batch)
                except FileNotFoundError:  # a newer compact file's writer removed old batches: move on
                    batch = self._next_free(batch)
                    continue
                kept = merge(prior) if merge is not None else prior
                if self._create(batch, kept + list(entries)):
                    if kept is not prior:
                        _unlink_missing(prior, kept)  # replaced by merged files
                    self._retain(batch)
                    return batch
                if kept is not prior:
                    _unlink_missing(kept, prior)  # merged files of a compact file another wrote
            elif self._create(batch, entries):
                return batch
            batch += 1
        raise SamzaError(f"Spark output log {str(self.log_directory)!r}: no free batch id after {batch}")

    def _next_free(self, batch: int) -> int:
        latest = self.latest()
        return max(batch + 1, (latest if latest is not None else -1) + 1)

    def _create(self, batch: int, entries: Sequence[LogEntry]) -> bool:
        """Write batch ``batch`` unless it exists: False when another writer has it."""
        temporary = self.log_directory / f".{batch}.{secrets.token_hex(6)}.tmp"
        text = "\n".join([VERSION_LINE, *(entry.to_json() for entry in entries)])
        try:
            with temporary.open("w", encoding="utf-8") as file:
                file.write(text)
                file.flush()
                os.fsync(file.fileno())
            try:
                os.link(temporary, self.log_directory / batch_name(batch, self.interval))
            except FileExistsError:
                return False
        finally:
            temporary.unlink(missing_ok=True)
        fsync_directory(self.log_directory)
        return True

    def _entries_up_to(self, latest: int) -> list[LogEntry]:
        start = max(0, (latest + 1) // self.interval * self.interval - 1)
        entries: list[LogEntry] = []
        for batch in range(start, latest + 1):
            entries.extend(self._read(batch))
        return entries

    def _entries_before(self, compaction: int) -> list[LogEntry]:
        entries: list[LogEntry] = []
        for batch in range(max(0, compaction - self.interval), compaction):
            entries.extend(self._read(batch))
        return entries

    def _read(self, batch: int) -> list[LogEntry]:
        path = self.log_directory / batch_name(batch, self.interval)
        lines = path.read_text(encoding="utf-8").splitlines()
        if not lines or lines[0] != VERSION_LINE:
            raise SamzaError(f"Spark output log file {str(path)!r} does not start with {VERSION_LINE!r}")
        try:
            records = [json.loads(line) for line in lines[1:] if line.strip()]
            return [
                LogEntry(str(r["path"]), int(r["size"]), int(r["modificationTime"]), str(r["action"]))
                for r in records
            ]
        except (ValueError, KeyError, TypeError) as exc:
            raise SamzaError(f"Spark output log file {str(path)!r} has an entry that is not a "
                             f"SinkFileStatus: {exc}") from None  # fmt: skip

    def _retain(self, compaction: int) -> None:
        """Delete the batch files older than the compact file before ``compaction``."""
        keep_from = compaction - self.interval
        for batch in self.batches():
            if batch < keep_from:
                (self.log_directory / batch_name(batch, self.interval)).unlink(missing_ok=True)


def _unlink_missing(entries: Sequence[LogEntry], kept: Sequence[LogEntry]) -> None:
    """Delete the files of ``entries`` that ``kept`` does not list."""
    names = {entry.path for entry in kept}
    for entry in entries:
        if entry.path not in names:
            entry.local_path.unlink(missing_ok=True)


def committed_paths(directory: str | os.PathLike[str]) -> list[str]:
    """The committed files of an output directory, as plain paths, read from its ``_spark_metadata`` log:
    what ``spark.read.parquet(directory)`` lists, for readers that do not read the log themselves
    (``duckdb.read_parquet(committed_paths(d))``, ``pandas.read_parquet(committed_paths(d))``). Empty
    when nothing is committed."""
    return [str(entry.local_path) for entry in SparkMetadataLog(Path(directory)).live()]


__all__ = [
    "COMPACT_INTERVAL",
    "METADATA_DIR",
    "LogEntry",
    "SparkMetadataLog",
    "committed_paths",
    "entry_for",
    "file_uri",
]
