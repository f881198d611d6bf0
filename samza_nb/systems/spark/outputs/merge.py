"""Small output files merged when their log is compacted (``systems.<s>.spark.output.target.file.rows``).

A task writes one file per stream per commit: at the default commit period, files of a few hundred rows.
When a container writes a compaction batch of a stream's log (:mod:`.spark_log`), the files of the live set
that its own tasks wrote are merged by size class, as a log-structured merge does: ten or more files of one
task whose row counts have the same number of digits become one file (which may fill the class above, and
so on), while files of ``target`` rows or more are left alone. Each row is rewritten about once per size
class (log10 of ``target`` over the rows per commit), and a task keeps at most nine files per class. The
compact file lists the merged file instead of the files it replaces, which are deleted once the compact
file is in place (a reader that listed them before may fail and read again). Only the container's own
tasks' files are merged: another container may be settling its tasks' files (recovery deletes a task's
files that no log lists). ``target = 0`` turns merging off.
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Final

from samza_nb.systems.spark.outputs.spark_log import LogEntry, entry_for

log = logging.getLogger(__name__)

DEFAULT_TARGET_ROWS: Final = 1_000_000
"""Files of this many rows or more are never merged (``systems.<s>.spark.output.target.file.rows``)."""
FAN_IN: Final = 10
"""Files of one size class merged at once."""


class SmallFileMerger:
    """Merges the small files of the tasks ``owned()`` names (file-name prefixes) in a compaction's live
    set (see the module); keeps what it learnt of each file's row count."""

    def __init__(self, target_rows: int, owned: Callable[[], frozenset[str]]) -> None:
        self.target_rows = target_rows
        self._owned = owned
        self._rows: dict[str, int] = {}

    def merge(self, entries: list[LogEntry]) -> list[LogEntry]:
        """``entries`` with each full size class of an owned task's small files replaced by one merged
        file (written here); ``entries`` itself when nothing was merged."""
        if self.target_rows <= 0:
            return entries
        owned = self._owned()
        groups: dict[tuple[str, int], list[LogEntry]] = defaultdict(list)
        for entry in entries:
            prefix = entry.local_path.name.split(".", 1)[0]
            rows = self._count(entry)
            if prefix in owned and 0 < rows < self.target_rows:
                groups[(prefix, len(str(rows)))].append(entry)
        replaced: dict[str, LogEntry | None] = {}
        for (prefix, _digits), group in sorted(groups.items(), key=lambda item: item[0][1]):
            if len(group) < FAN_IN:
                continue
            merged = self._write(prefix, group)
            if merged is None:
                continue
            replaced[group[0].path] = merged
            replaced.update((entry.path, None) for entry in group[1:])
        if not replaced:
            return entries
        result = []
        for entry in entries:
            if entry.path not in replaced:
                result.append(entry)
            elif (merged_entry := replaced[entry.path]) is not None:
                result.append(merged_entry)
        return result

    def _count(self, entry: LogEntry) -> int:
        rows = self._rows.get(entry.path)
        if rows is None:
            import pyarrow.parquet as pq

            try:
                rows = pq.ParquetFile(entry.local_path).metadata.num_rows
            except OSError:
                rows = 0
            self._rows[entry.path] = rows
        return rows

    def _write(self, prefix: str, group: list[LogEntry]) -> LogEntry | None:
        """One file of the rows of ``group`` (in order) beside them; None when their schemas do not merge."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        directory = group[0].local_path.parent
        try:
            tables = [pq.read_table(entry.local_path) for entry in group]
            table = pa.concat_tables(tables, promote_options="default")
        except (OSError, pa.ArrowException) as exc:
            log.warning("Spark output %s: files of %s not merged: %s", directory, prefix, exc)
            return None
        name = f"{prefix}.{time.time_ns():020d}-{secrets.token_hex(4)}.parquet"
        temporary = directory / f".{name}.tmp"
        with temporary.open("wb") as file:
            pq.write_table(table, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, directory / name)
        merged = entry_for(directory / name)
        self._rows[merged.path] = table.num_rows
        return merged


__all__ = ["DEFAULT_TARGET_ROWS", "SmallFileMerger"]
