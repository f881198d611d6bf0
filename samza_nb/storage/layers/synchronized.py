"""SynchronizedStore: one lock around every call of a store, for stores shared between threads."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from typing import Any

from samza_nb.storage.base import KeyValueStore


class SynchronizedStore:
    """Makes every call of ``inner`` atomic with respect to the others (one re-entrant lock).

    Used when process, window or commit of a task may run on different threads (a container thread pool,
    asynchronous commit). ``range``/``all`` take their snapshot under the lock; iterating it needs none.
    """

    def __init__(self, inner: KeyValueStore[Any, Any]) -> None:
        self._inner = inner
        self._lock = threading.RLock()

    @property
    def inner(self) -> KeyValueStore[Any, Any]:
        """The store below."""
        return self._inner

    def get(self, key: Any) -> Any:
        with self._lock:
            return self._inner.get(key)

    def get_all(self, keys: Iterable[Any]) -> dict[Any, Any]:
        with self._lock:
            return self._inner.get_all(keys)

    def put(self, key: Any, value: Any) -> None:
        with self._lock:
            self._inner.put(key, value)

    def put_all(self, entries: Iterable[tuple[Any, Any]]) -> None:
        with self._lock:
            self._inner.put_all(entries)

    def delete(self, key: Any) -> None:
        with self._lock:
            self._inner.delete(key)

    def delete_all(self, keys: Iterable[Any]) -> None:
        with self._lock:
            self._inner.delete_all(keys)

    def range(self, from_key: Any, to_key: Any) -> Iterator[tuple[Any, Any]]:
        with self._lock:
            return self._inner.range(from_key, to_key)

    def all(self) -> Iterator[tuple[Any, Any]]:
        with self._lock:
            return self._inner.all()

    def snapshot(self) -> list[tuple[Any, Any]]:
        with self._lock:
            return self._inner.snapshot()

    def flush(self) -> None:
        with self._lock:
            self._inner.flush()

    def close(self) -> None:
        with self._lock:
            self._inner.close()

    def __repr__(self) -> str:
        return f"SynchronizedStore({self._inner!r})"


__all__ = ["SynchronizedStore"]
