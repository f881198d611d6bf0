"""DuckDBEngine: a bytes → bytes store on one DuckDB table, served from memory, written in Arrow batches.

DuckDB is an analytic engine: a single-row upsert costs about a millisecond, an upsert of an Arrow batch a
microsecond per row. So the engine never touches DuckDB per write. Writes collect in :attr:`pending`
(``None`` marks a delete); :meth:`DuckDBEngine.write_pending` upserts them all with one statement (and
deletes with another) inside a transaction the caller owns, after which the caller reports the outcome
with :meth:`~DuckDBEngine.mark_committed` or :meth:`~DuckDBEngine.discard_pending_failed`.

Reads look at the pending writes first, then at the committed rows: an in-memory mirror of the table,
loaded with one query at open when it has at most ``preload_max_rows`` rows, or else DuckDB itself (point
queries behind a small read cache; :meth:`~DuckDBEngine.get_all` and :meth:`~DuckDBEngine.prefetch` in one
query).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from typing import Any, Final, NoReturn

import duckdb

from samza_nb.storage.base import StoreError, describe
from samza_nb.storage.duckdb.batches import all_bytes, as_dict, overlay
from samza_nb.storage.duckdb.committed import CommittedRows
from samza_nb.storage.duckdb.job_files import database_path, quote_ident

log = logging.getLogger(__name__)

_MISSING: Final[Any] = object()


class DuckDBEngine:
    """A bytes → bytes store on the DuckDB table ``table`` (``k BLOB PRIMARY KEY, v BLOB``).

    The table is created if missing; an existing table with other columns is refused with
    :class:`StoreError`. ``connection`` is any connection or cursor to the job's database; the engine reads
    through its own cursor of it. Keys and values must be ``bytes``.

    Thread-safety: every method may be called from any thread. Writes and the commit protocol take a lock;
    reads of pending or mirrored data take none.

    Commit protocol (the caller owns the transaction)::

        engine.write_pending(cur)   # cur: a cursor of the same database, inside cur.begin()
        cur.commit()
        engine.mark_committed()     # or, after a failure or rollback: engine.discard_pending_failed()

    Writes made while a commit is under way stay pending for the next one.
    """

    def __init__(
        self,
        connection: duckdb.DuckDBPyConnection,
        table: str,
        *,
        preload_max_rows: int = 1_000_000,
        read_cache_size: int = 100_000,
        store_name: str | None = None,
    ) -> None:
        self._name = store_name if store_name is not None else table
        self._table = table
        self._q = quote_ident(table)
        self._lock = threading.RLock()
        self.pending: dict[bytes, bytes | None] = {}
        # The batch of the commit under way; after a failed commit, a stale shadow of entries that were put
        # back into `pending` (kept so that lock-free readers racing with the put-back never miss a key).
        self._writing: dict[bytes, bytes | None] | None = None
        self._write_open = False
        self._write_has_deletes = False
        self._truncate = False
        self._closed = False
        try:
            self._cur = connection.cursor()
        except duckdb.Error as exc:
            raise StoreError(
                f"store {self._name!r}: the DuckDB connection is unusable: {exc}", store=self._name
            ) from exc
        self._path: str | None = None  # the database's file, looked up for the first error message
        self._committed = CommittedRows(
            self._cur,
            table,
            preload_max_rows=preload_max_rows,
            read_cache_size=read_cache_size,
            error=self._error,
        )
        try:
            self._committed.open()
        except BaseException:
            self._cur.close()
            raise

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def table(self) -> str:
        """The DuckDB table holding the committed rows."""
        return self._table

    @property
    def store_name(self) -> str:
        """The store this engine serves (used in error messages)."""
        return self._name

    @property
    def mirrored(self) -> bool:
        """True while the committed rows are mirrored in memory (reads never query DuckDB)."""
        return self._committed.mirror is not None

    def row_count(self) -> int:
        """The number of rows in the table as of the last commit."""
        with self._lock:
            mirror = self._committed.mirror
            if mirror is not None and not self._truncate:  # the mirror is the committed rows
                return len(mirror)
            return self._committed.row_count()

    def pending_count(self) -> int:
        """The number of writes not yet committed (including those of a commit under way)."""
        with self._lock:
            if self._write_open and self._writing is not None:
                return len(self._writing.keys() | self.pending.keys())
            return len(self.pending)

    # -- reads -----------------------------------------------------------------------------------------
    def get(self, key: bytes) -> bytes | None:
        """The value of ``key``: pending, else committed, else None."""
        if type(key) is not bytes:
            raise self._key_error(key, "get")
        value = self.pending.get(key, _MISSING)
        if value is not _MISSING:
            return value  # type: ignore[no-any-return]
        writing = self._writing
        if writing is not None:
            value = writing.get(key, _MISSING)
            if value is not _MISSING:
                return value  # type: ignore[no-any-return]
        mirror = self._committed.mirror
        if mirror is not None:
            return mirror.get(key)
        return self._read_committed([key]).get(key)

    def get_all(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The values of those ``keys`` that have one; committed values not in memory in one query."""
        if keys is None:
            raise StoreError(f"store {self._name!r}: get_all() got None as keys", store=self._name)
        result: dict[bytes, bytes] = {}
        unresolved: list[bytes] = []
        pending, writing, mirror = self.pending, self._writing, self._committed.mirror
        for key in keys:
            if type(key) is not bytes:
                raise self._key_error(key, "get_all")
            value = pending.get(key, _MISSING)
            if value is _MISSING and writing is not None:
                value = writing.get(key, _MISSING)
            if value is _MISSING:
                if mirror is None:
                    unresolved.append(key)
                    continue
                value = mirror.get(key)
            if value is not None:
                result[key] = value
        if unresolved:
            for key, value in self._read_committed(unresolved).items():
                if value is not None:
                    result[key] = value
        return result

    def prefetch(self, keys: Iterable[bytes]) -> None:
        """Load the committed values of ``keys`` into the read cache with one query (no-op when mirrored)."""
        if self._committed.mirror is None:
            self._read_committed([k for k in keys if type(k) is bytes])

    def _read_committed(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return self._committed.get_many(keys)

    def range(self, from_key: bytes, to_key: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Entries with ``from_key <= key < to_key`` in byte order, as of this call (pending overlaid)."""
        if type(from_key) is not bytes:
            raise self._key_error(from_key, "range", "bound")
        if type(to_key) is not bytes:
            raise self._key_error(to_key, "range", "bound")
        if from_key >= to_key:
            return iter(())
        return self._entries(from_key, to_key)

    def all(self) -> Iterator[tuple[bytes, bytes]]:
        """Every entry in byte order, as of this call (pending overlaid)."""
        return self._entries(None, None)

    def snapshot(self) -> list[tuple[bytes, bytes]]:
        """A stable copy of every entry, in byte order."""
        return list(self._entries(None, None))

    def _entries(self, low: bytes | None, high: bytes | None) -> Iterator[tuple[bytes, bytes]]:
        with self._lock:
            latest: dict[bytes, bytes | None] = {}
            if self._writing is not None:
                latest.update(self._writing)
            latest.update(self.pending)
            changes = sorted(
                item
                for item in latest.items()
                if (low is None or item[0] >= low) and (high is None or item[0] < high)
            )
            committed = self._committed.entries(low, high)
        return overlay(committed, changes) if changes else committed

    # -- writes ----------------------------------------------------------------------------------------
    def put(self, key: bytes, value: bytes) -> None:
        """Set ``key`` to ``value`` (pending until the next commit)."""
        if type(key) is not bytes:
            raise self._key_error(key, "put")
        if type(value) is not bytes:
            raise self._value_error(key, value, "put")
        with self._lock:
            if self._closed:
                raise self._closed_error("put")
            self.pending[key] = value

    def put_all(self, entries: Iterable[tuple[bytes, bytes]]) -> None:
        """Set every ``(key, value)``; nothing is written if one of them is not bytes."""
        items = entries if isinstance(entries, list) else list(entries)
        batch = as_dict(items)  # later entries of a key win, as with one put after another
        if batch is None or not all_bytes(batch, allow_none=False):
            self._refuse(items, "put_all", allow_none=False)
        with self._lock:
            if self._closed:
                raise self._closed_error("put_all")
            self.pending.update(batch)

    def delete(self, key: bytes) -> None:
        """Remove ``key`` (pending until the next commit)."""
        if type(key) is not bytes:
            raise self._key_error(key, "delete")
        with self._lock:
            if self._closed:
                raise self._closed_error("delete")
            self.pending[key] = None

    def delete_all(self, keys: Iterable[bytes]) -> None:
        """Remove every key of ``keys``."""
        if keys is None:
            raise StoreError(f"store {self._name!r}: delete_all() got None as keys", store=self._name)
        batch = list(keys)
        for key in batch:
            if type(key) is not bytes:
                raise self._key_error(key, "delete_all")
        with self._lock:
            if self._closed:
                raise self._closed_error("delete_all")
            self.pending.update(dict.fromkeys(batch))

    def restore_batch(self, pairs: Iterable[tuple[bytes, bytes | None]]) -> None:
        """Apply changelog records in order (``None`` = delete); they become pending, like writes."""
        items = pairs if isinstance(pairs, list) else list(pairs)
        batch = as_dict(items)  # the last record of a key wins
        if batch is None or not all_bytes(batch, allow_none=True):
            self._refuse(items, "restore_batch", allow_none=True)
        with self._lock:
            if self._closed:
                raise self._closed_error("restore_batch")
            self.pending.update(batch)

    def truncate(self) -> None:
        """Drop every entry, committed and pending: the next :meth:`write_pending` empties the table first.

        For a restore from scratch, before the task reads the store (a cache above decides at its first
        miss whether the store below is empty). Not allowed while a commit is under way.
        """
        with self._lock:
            if self._write_open:
                raise self._error("truncate() called while a commit is under way")
            self.pending = {}
            self._writing = None
            self._committed.clear()
            self._truncate = True

    def flush(self) -> None:
        """Nothing to do: writes reach DuckDB through :meth:`write_pending` only."""

    def close(self) -> None:
        """Release the engine's cursor. Uncommitted writes are dropped (logged when there are any)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self.pending:
                log.warning(
                    "store %r: closing with %d uncommitted writes; they are dropped",
                    self._name,
                    len(self.pending),
                )
            try:
                self._cur.close()
            except duckdb.Error:
                log.debug("store %r: closing its cursor failed", self._name, exc_info=True)

    # -- the commit protocol ---------------------------------------------------------------------------
    def write_pending(self, conn: duckdb.DuckDBPyConnection) -> int:
        """Write every pending change through ``conn``, inside the caller's open transaction.

        Upserts all puts with one Arrow-batch statement and deletes all deletes with one statement; commits
        nothing. Returns the number of changes written. Must be followed by :meth:`mark_committed` (after
        the caller committed) or :meth:`discard_pending_failed` (after any failure or rollback, including
        a :class:`StoreError` from this method).
        """
        with self._lock:
            if self._closed:
                raise self._closed_error("write_pending")
            if self._write_open:
                raise self._error(
                    "write_pending() called again before mark_committed() or discard_pending_failed()"
                )
            batch = self.pending
            self._writing = batch  # published before `pending` is replaced: readers always find the key
            self.pending = {}
            self._write_open = True
            truncate = self._truncate
            # The keys the table holds (once truncated, none), when they are known.
            mirror: dict[bytes, bytes] | None = {} if truncate else self._committed.mirror
        deletes = [key for key, value in batch.items() if value is None]
        self._write_has_deletes = bool(deletes)
        puts: dict[bytes, bytes | None] = (
            {key: value for key, value in batch.items() if value is not None} if deletes else batch
        )
        # With the committed keys in memory, keys the table lacks take a plain INSERT (~30% cheaper than
        # an upsert); the others (or all, without a mirror) an INSERT OR REPLACE.
        inserts: dict[bytes, bytes | None] = {}
        if mirror is not None:
            inserts = puts if not mirror else {k: v for k, v in puts.items() if k not in mirror}
            puts = {} if len(inserts) == len(puts) else {k: v for k, v in puts.items() if k in mirror}
        try:
            if truncate:
                conn.execute(f"DELETE FROM {self._q}")
            if inserts:
                self._run_with(
                    conn,
                    {"k": list(inserts), "v": list(inserts.values())},
                    f"INSERT INTO {self._q} SELECT k, v FROM {{view}}",
                )
            if puts:
                self._run_with(
                    conn,
                    {"k": list(puts), "v": list(puts.values())},
                    f"INSERT OR REPLACE INTO {self._q} SELECT k, v FROM {{view}}",
                )
            if deletes and not truncate:
                self._run_with(
                    conn, {"k": deletes}, f"DELETE FROM {self._q} WHERE k IN (SELECT k FROM {{view}})"
                )
        except duckdb.Error as exc:
            raise self._error(f"writing {len(batch)} changes to {self._table!r} failed: {exc}") from exc
        return len(batch)

    def _run_with(self, conn: duckdb.DuckDBPyConnection, columns: dict[str, list[Any]], sql: str) -> None:
        import pyarrow as pa

        table = pa.table({name: pa.array(values, type=pa.binary()) for name, values in columns.items()})
        view = f"__samza_nb_batch_{id(self):x}"
        conn.register(view, table)
        try:
            conn.execute(sql.format(view=view))
        finally:
            conn.unregister(view)

    def mark_committed(self) -> None:
        """The transaction holding :meth:`write_pending`'s changes committed: they are now the committed
        state (the mirror and read cache take them over)."""
        with self._lock:
            if not self._write_open or self._writing is None:
                raise self._error("mark_committed() called without a write_pending() before it")
            batch = self._writing
            self._truncate = False
            self._committed.apply(batch, self._write_has_deletes)
            self._writing = None  # only now: readers find the keys in the mirror or in DuckDB
            self._write_open = False

    def discard_pending_failed(self) -> None:
        """The transaction holding :meth:`write_pending`'s changes did not commit: they are pending again
        (under any newer writes) for the next commit. A no-op when no commit is under way."""
        with self._lock:
            if not self._write_open:
                return
            batch = self._writing
            if batch is not None:
                pending = self.pending
                for key, value in batch.items():
                    pending.setdefault(key, value)
            # `_writing` stays as a stale shadow of what is now in `pending` (which readers consult first).
            self._write_open = False

    # -- errors ----------------------------------------------------------------------------------------
    def _refuse(self, items: list[Any], op: str, *, allow_none: bool) -> NoReturn:
        """Raise the error for the first invalid item of a batch."""
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise self._error(f"{op}() got {describe(item)}, not a (key, value) pair")
            key, value = item
            if type(key) is not bytes:
                raise self._key_error(key, op)
            if type(value) is not bytes and not (allow_none and value is None):
                raise self._value_error(key, value, op)
        raise self._error(f"{op}() got an invalid batch")

    def _error(self, message: str, key: Any = None) -> StoreError:
        if self._path is None:
            with self._lock:
                self._path = database_path(self._cur)
        return StoreError(f"store {self._name!r} ({self._path}): {message}", store=self._name, key=key)

    def _key_error(self, key: Any, op: str, what: str = "key") -> StoreError:
        if key is None:
            return StoreError(
                f"store {self._name!r}: {op}() got None as {what}; None is not a valid {what}",
                store=self._name,
            )
        return StoreError(
            f"store {self._name!r}: {op}() got {what} {describe(key)} of type {type(key).__name__}; "
            "the engine stores bytes only",
            store=self._name,
            key=key,
        )

    def _value_error(self, key: Any, value: Any, op: str) -> StoreError:
        if value is None:
            return StoreError(
                f"store {self._name!r}: {op}() got None as the value of key {describe(key)}; "
                "None is not a valid value (use delete)",
                store=self._name,
                key=key,
            )
        return StoreError(
            f"store {self._name!r}: {op}() got value {describe(value)} of type {type(value).__name__} "
            "for key "
            f"{describe(key)}; the engine stores bytes only",
            store=self._name,
            key=key,
        )

    def _closed_error(self, op: str) -> StoreError:
        return StoreError(f"store {self._name!r}: {op}() after close()", store=self._name)

    def __repr__(self) -> str:
        return f"DuckDBEngine({self._table!r}, store={self._name!r}, mirrored={self.mirrored})"


__all__ = ["DuckDBEngine", "quote_ident"]
