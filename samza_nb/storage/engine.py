"""The storage engine seam: what a store's commit and restore drive, below the store layers a task uses.

A :class:`~samza_nb.storage.registry.StoreFactory` hands out, with each store partition, the engine that
holds its bytes. The :class:`~samza_nb.storage.manager.StorageManager`, the state file's transaction and the
:class:`~samza_nb.storage.restore.Restorer` talk to it only through :class:`StorageEngine`;
:class:`~samza_nb.storage.duckdb.engine.DuckDBEngine` is the implementation.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from duckdb import DuckDBPyConnection


@runtime_checkable
class StorageEngine(Protocol):
    """One partition of a store as its commit and restore see it: writes pending since the last commit,
    written into a transaction the caller owns, then confirmed or given back.

    Commit protocol::

        engine.write_pending(cur)   # cur: a cursor of the state file, inside cur.begin()
        cur.commit()
        engine.mark_committed()     # or, after any failure or rollback: engine.discard_pending_failed()

    Every method may be called from any thread.
    """

    def write_pending(self, conn: DuckDBPyConnection) -> int:
        """Write every change pending since the last commit through ``conn``, inside the transaction the
        caller has open on it, committing nothing; the number of changes written. Must be followed by
        :meth:`mark_committed` or :meth:`discard_pending_failed`; a StoreError (naming the store) when
        writing fails or a commit is already under way."""
        ...

    def mark_committed(self) -> None:
        """The transaction holding :meth:`write_pending`'s changes committed: they are the committed state
        now (reads see them as such). A StoreError when no :meth:`write_pending` came before."""
        ...

    def discard_pending_failed(self) -> None:
        """The transaction holding :meth:`write_pending`'s changes did not commit: they are pending again
        (under any writes made since) for the next commit. A no-op when no commit is under way."""
        ...

    def restore_batch(self, pairs: Iterable[tuple[bytes, bytes | None]]) -> None:
        """Apply changelog records ``(key, value)`` in order (value None: delete the key); they become
        pending writes, committed with the next commit. Nothing is applied, and a StoreError names the
        first bad record, when one is not a pair of bytes."""
        ...

    def truncate(self) -> None:
        """Drop every entry, committed and pending: the next :meth:`write_pending` empties the store first
        (a restore that meets a new generation of its changelog). Not allowed while a commit is under way."""
        ...

    def close(self) -> None:
        """Release what the engine holds; idempotent. Uncommitted writes are dropped."""
        ...


__all__ = ["StorageEngine"]
