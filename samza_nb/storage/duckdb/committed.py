"""CommittedRows: the committed rows of a store table, from an in-memory mirror or from DuckDB.

A table with at most ``preload_max_rows`` rows is loaded with one query at open and mirrored in a dict
that every commit updates, so reads never query DuckDB. A larger table is read through DuckDB: point reads
behind a small LRU read cache, batches in one query, ranges streamed from a cursor of their own.
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, Final

import duckdb

from samza_nb.storage.base import StoreError
from samza_nb.storage.duckdb.job_files import quote_ident, table_columns

_MISSING: Final[Any] = object()
_FETCH_ROWS: Final = 8192
_INCREMENTAL_SORT_LIMIT: Final = 2048


def _one(result: duckdb.DuckDBPyConnection) -> Any:
    """The first row of ``result`` or None, reading it to the end: a result read with ``fetchone()`` alone
    keeps the cursor's transaction open, and DuckDB then keeps the undo buffers of every later commit (a
    long job's memory grew with each one)."""
    rows = result.fetchall()
    return rows[0] if rows else None


class CommittedRows:
    """What the last commit left in table ``table``, read through ``cur`` (a cursor of its own).

    Not thread-safe by itself: :class:`~samza_nb.storage.duckdb.engine.DuckDBEngine` calls it under its lock,
    except for lock-free reads of :attr:`mirror` (single dict operations).
    """

    def __init__(
        self,
        cur: duckdb.DuckDBPyConnection,
        table: str,
        *,
        preload_max_rows: int,
        read_cache_size: int,
        error: Callable[[str], StoreError],
    ) -> None:
        self._cur = cur
        self._table = table
        self._q = quote_ident(table)
        self._preload_max = preload_max_rows
        self._read_cache_size = max(0, read_cache_size)
        self._error = error
        self.mirror: dict[bytes, bytes] | None = None
        """The committed rows, when they are mirrored in memory."""
        self._sorted: list[bytes] | None = None  # the mirror's keys in order, built on first range
        self._read_cache: OrderedDict[bytes, bytes | None] = OrderedDict()

    def open(self) -> None:
        """Create the table if missing (refusing a foreign one) and mirror it if small enough."""
        try:
            # Create first, then look: probing a missing table costs more (DuckDB suggests similar names).
            self._cur.execute(f"CREATE TABLE IF NOT EXISTS {self._q} (k BLOB PRIMARY KEY, v BLOB NOT NULL)")
            columns = table_columns(self._cur, self._table)
        except duckdb.Error as exc:
            raise self._error(f"opening table {self._table!r} failed: {exc}") from exc
        if columns != [("k", "BLOB"), ("v", "BLOB")]:
            raise self._error(
                f"table {self._table!r} exists but is not a samza_nb store table (columns {columns}); "
                "refusing to use it"
            )
        if self._preload_max > 0:
            rows = self.row_count()
            if rows == 0:
                self.mirror = {}  # a new table: nothing to load
            elif rows <= self._preload_max:
                try:
                    self.mirror = dict(self._cur.execute(f"SELECT k, v FROM {self._q}").fetchall())
                except duckdb.Error as exc:
                    raise self._error(f"loading table {self._table!r} failed: {exc}") from exc

    def row_count(self) -> int:
        """The number of committed rows (one query)."""
        try:
            row = _one(self._cur.execute(f"SELECT count(*) FROM {self._q}"))
        except duckdb.Error as exc:
            raise self._error(f"counting the rows of {self._table!r} failed: {exc}") from exc
        return int(row[0]) if row else 0

    # -- reads -----------------------------------------------------------------------------------------
    def get_many(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """Committed values of ``keys`` (None when absent): mirror, else read cache, else one query."""
        mirror = self.mirror
        if mirror is not None:
            return {key: mirror.get(key) for key in keys}
        cache = self._read_cache
        found: dict[bytes, bytes | None] = {}
        missing: list[bytes] = []
        for key in keys:
            value = cache.get(key, _MISSING)
            if value is _MISSING:
                missing.append(key)
            else:
                cache.move_to_end(key)
                found[key] = value
        if not missing:
            return found
        try:
            if len(missing) == 1:
                row = _one(self._cur.execute(f"SELECT v FROM {self._q} WHERE k = ?", [missing[0]]))
                rows = [(missing[0], row[0])] if row else []
            else:
                rows = self._cur.execute(
                    f"SELECT k, v FROM {self._q} WHERE k IN (SELECT unnest(?::BLOB[]))", [missing]
                ).fetchall()
        except duckdb.Error as exc:
            raise self._error(f"reading from {self._table!r} failed: {exc}") from exc
        loaded: dict[bytes, bytes | None] = dict.fromkeys(missing)
        loaded.update(rows)
        found.update(loaded)
        if self._read_cache_size:
            cache.update(loaded)
            while len(cache) > self._read_cache_size:
                cache.popitem(last=False)
        return found

    def entries(self, low: bytes | None, high: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        """Rows with ``low <= k < high`` (None = unbounded) in key order, as of this call."""
        mirror = self.mirror
        if mirror is not None:
            if self._sorted is None:
                self._sorted = sorted(mirror)
            keys = self._sorted
            start = 0 if low is None else bisect.bisect_left(keys, low)
            stop = len(keys) if high is None else bisect.bisect_left(keys, high)
            return iter([(key, mirror[key]) for key in keys[start:stop]])
        conditions, params = [], []
        if low is not None:
            conditions.append("k >= ?")
            params.append(low)
        if high is not None:
            conditions.append("k < ?")
            params.append(high)
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        try:
            cur = self._cur.cursor()  # its own connection: a consistent snapshot, streamed
            cur.execute(f"SELECT k, v FROM {self._q}{where} ORDER BY k", params)
        except duckdb.Error as exc:
            raise self._error(f"reading a range of {self._table!r} failed: {exc}") from exc
        return _stream(cur)

    # -- changes ---------------------------------------------------------------------------------------
    def apply(self, batch: dict[bytes, bytes | None], has_deletes: bool) -> None:
        """``batch`` was committed: bring the mirror (or the read cache) up to date."""
        mirror = self.mirror
        if mirror is None:
            cache = self._read_cache
            for key in batch.keys() & cache.keys():
                cache[key] = batch[key]
            return
        keys = self._sorted
        if keys is not None:
            added = [k for k, v in batch.items() if v is not None and k not in mirror]
            removed = [k for k, v in batch.items() if v is None and k in mirror]
            if len(added) + len(removed) > _INCREMENTAL_SORT_LIMIT:
                self._sorted = None
            else:
                for key in removed:
                    del keys[bisect.bisect_left(keys, key)]
                for key in added:
                    bisect.insort(keys, key)
        if has_deletes:
            for key, value in batch.items():
                if value is None:
                    mirror.pop(key, None)
                else:
                    mirror[key] = value
        else:
            mirror.update(batch)  # type: ignore[arg-type]  # no None values in this batch
        if len(mirror) > self._preload_max:
            self.mirror = None  # outgrew the preload limit: read through DuckDB from now on
            self._sorted = None

    def clear(self) -> None:
        """Treat the table as empty (it is emptied by the next commit): an empty mirror."""
        self.mirror = {}
        self._sorted = None
        self._read_cache.clear()


def _stream(cur: duckdb.DuckDBPyConnection) -> Iterator[tuple[bytes, bytes]]:
    try:
        while True:
            rows = cur.fetchmany(_FETCH_ROWS)
            if not rows:
                return
            yield from rows
    finally:
        cur.close()


__all__ = ["CommittedRows", "quote_ident"]
