"""CachedStore: an LRU object cache with a dirty list that batches writes (Samza's CachedStore).

The rules (DESIGN §6, as in Samza):

- ``get`` serves hits from the cache; a miss reads the store below and caches the answer (absence too).
- ``put``/``delete`` only touch the cache and mark the key dirty; repeated writes of a key between two
  batches write only its latest value.
- The dirty entries are written below with one ``put_all`` (and one ``delete_all`` for deletes) when their
  count reaches ``write_batch_size``, when a dirty entry is about to be evicted, and before ``range``,
  ``all``, ``snapshot``, ``flush`` and ``close``.
- The cache holds at most ``cache_size`` entries; inserting one more evicts the least recently used.

Values are cached by reference: an object read back is the object that was put, so do not modify it
afterwards (the store below holds its serialized form). Keys must be hashable.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from typing import Any, Final

from samza_nb.errors import ConfigError
from samza_nb.storage.base import KeyValueStore, StoreError, describe, none_error

_MISSING: Final[Any] = object()


class CachedStore:
    """A write-behind LRU cache of ``cache_size`` entries over ``inner``, writing dirty entries in batches
    of ``write_batch_size``.

    ``0 < cache_size < write_batch_size`` (or a size below 1) is a :class:`ConfigError` naming
    ``stores.<store_name>.object.cache.size`` (or ``.write.batch.size``). Not thread-safe by itself: wrap it
    in :class:`~samza_nb.storage.synchronized.SynchronizedStore` when several threads use the store.

    When writing a batch fails with a :class:`StoreError` naming a key (a value its serde cannot encode),
    that key's unwritten change is dropped from the cache and the other dirty entries stay dirty; the error
    propagates from whichever call triggered the batch.
    """

    def __init__(
        self, inner: KeyValueStore[Any, Any], cache_size: int, write_batch_size: int, store_name: str
    ) -> None:
        if write_batch_size < 1:
            key = f"stores.{store_name}.write.batch.size"
            raise ConfigError(f"{key}={write_batch_size} is not valid: expected an integer >= 1", key=key)
        if cache_size < 1:
            key = f"stores.{store_name}.object.cache.size"
            raise ConfigError(
                f"{key}={cache_size} is not valid for a cache: expected >= 1 (0 turns the cache off)", key=key
            )
        if cache_size < write_batch_size:
            key = f"stores.{store_name}.object.cache.size"
            raise ConfigError(
                f"{key}={cache_size} is smaller than "
                f"stores.{store_name}.write.batch.size={write_batch_size}: "
                "the cache must hold a whole batch of dirty entries (raise the cache size, lower the batch "
                "size, or set the cache size to 0 to turn the cache off)",
                key=key,
            )
        self._inner = inner
        self._name = store_name
        self._size = cache_size
        self._batch = write_batch_size
        self._cache: OrderedDict[Any, Any] = OrderedDict()  # key -> value, or None for a known absence
        self._dirty: dict[Any, Any] = {}  # key -> latest unwritten value (None = delete), oldest first
        self._dirty_deletes = False  # whether `_dirty` may hold a delete
        self.batch_writes = 0
        """How many dirty batches were written below (for metrics and tests)."""

    @property
    def inner(self) -> KeyValueStore[Any, Any]:
        """The store below."""
        return self._inner

    @property
    def cache_size(self) -> int:
        """The most entries the cache holds."""
        return self._size

    @property
    def write_batch_size(self) -> int:
        """The dirty count that triggers a batched write."""
        return self._batch

    def cached_count(self) -> int:
        """Entries in the cache now."""
        return len(self._cache)

    def dirty_count(self) -> int:
        """Entries written to the cache but not yet below."""
        return len(self._dirty)

    # -- reads -----------------------------------------------------------------------------------------
    def get(self, key: Any) -> Any:
        cache = self._cache
        try:
            value = cache.get(key, _MISSING)
        except TypeError as exc:
            raise self._unhashable(key, exc) from None
        if value is _MISSING:
            if key is None:
                raise none_error(self._name, "key", "get")
            value = self._inner.get(key)
            self._insert(key, value)
            return value
        cache.move_to_end(key)
        return value

    def get_all(self, keys: Iterable[Any]) -> dict[Any, Any]:
        if keys is None:
            raise none_error(self._name, "keys", "get_all")
        cache = self._cache
        result: dict[Any, Any] = {}
        misses: list[Any] = []
        for key in keys:
            if key is None:
                raise none_error(self._name, "key", "get_all")
            try:
                value = cache.get(key, _MISSING)
            except TypeError as exc:
                raise self._unhashable(key, exc) from None
            if value is _MISSING:
                misses.append(key)
                continue
            cache.move_to_end(key)
            if value is not None:
                result[key] = value
        if misses:
            found = self._inner.get_all(misses)
            for key in misses:
                value = found.get(key)
                self._insert(key, value)
                if value is not None:
                    result[key] = value
        return result

    def _insert(self, key: Any, value: Any) -> None:
        """Cache a clean entry read from below."""
        cache = self._cache
        cache[key] = value
        if len(cache) > self._size:
            self._evict()

    def _evict(self) -> None:
        eldest = next(iter(self._cache))
        if eldest in self._dirty:
            self._write_dirty()  # an unwritten entry must reach the store before it leaves the cache
        self._cache.popitem(last=False)

    # -- writes ----------------------------------------------------------------------------------------
    def put(self, key: Any, value: Any) -> None:
        if key is None or value is None:
            raise none_error(self._name, "key" if key is None else "value", "put")
        cache = self._cache
        try:
            cache[key] = value
        except TypeError as exc:
            raise self._unhashable(key, exc) from None
        cache.move_to_end(key)
        dirty = self._dirty
        dirty[key] = value
        if len(cache) > self._size:
            self._evict()
        if len(dirty) >= self._batch:
            self._write_dirty()

    def put_all(self, entries: Iterable[tuple[Any, Any]]) -> None:
        if entries is None:
            raise none_error(self._name, "entries", "put_all")
        batch = entries if isinstance(entries, list) else list(entries)
        for key, value in batch:
            if key is None or value is None:
                raise none_error(self._name, "key" if key is None else "value", "put_all")
        for key, value in batch:
            self.put(key, value)

    def delete(self, key: Any) -> None:
        if key is None:
            raise none_error(self._name, "key", "delete")
        cache = self._cache
        try:
            cache[key] = None
        except TypeError as exc:
            raise self._unhashable(key, exc) from None
        cache.move_to_end(key)
        dirty = self._dirty
        dirty[key] = None
        self._dirty_deletes = True
        if len(cache) > self._size:
            self._evict()
        if len(dirty) >= self._batch:
            self._write_dirty()

    def delete_all(self, keys: Iterable[Any]) -> None:
        if keys is None:
            raise none_error(self._name, "keys", "delete_all")
        batch = list(keys)
        if any(key is None for key in batch):
            raise none_error(self._name, "key", "delete_all")
        for key in batch:
            self.delete(key)

    def _write_dirty(self) -> None:
        """Write every dirty entry below, oldest first: puts in one batch, deletes in another."""
        dirty = self._dirty
        if not dirty:
            return
        self._dirty = {}
        if self._dirty_deletes:
            puts = [(key, value) for key, value in dirty.items() if value is not None]
            deletes = [key for key, value in dirty.items() if value is None]
        else:
            puts, deletes = list(dirty.items()), []
        self._dirty_deletes = False
        try:
            if puts:
                self._inner.put_all(puts)
            if deletes:
                self._inner.delete_all(deletes)
        except BaseException as exc:
            dirty.update(self._dirty)
            self._dirty = dirty
            self._dirty_deletes = True
            culprit = getattr(exc, "key", _MISSING) if isinstance(exc, StoreError) else _MISSING
            if culprit is not _MISSING and culprit is not None:
                try:
                    if culprit in dirty:
                        del dirty[culprit]
                        self._cache.pop(culprit, None)
                except TypeError:
                    pass
            raise
        self.batch_writes += 1

    # -- iteration and lifecycle -----------------------------------------------------------------------
    def range(self, from_key: Any, to_key: Any) -> Iterator[tuple[Any, Any]]:
        if from_key is None or to_key is None:
            raise none_error(self._name, "bound", "range")
        self._write_dirty()
        return self._inner.range(from_key, to_key)

    def all(self) -> Iterator[tuple[Any, Any]]:
        self._write_dirty()
        return self._inner.all()

    def snapshot(self) -> list[tuple[Any, Any]]:
        self._write_dirty()
        return self._inner.snapshot()

    def flush(self) -> None:
        self._write_dirty()
        self._inner.flush()

    def close(self) -> None:
        self.flush()
        self._inner.close()

    def _unhashable(self, key: Any, exc: TypeError) -> StoreError:
        return StoreError(
            f"store {self._name!r}: key {describe(key)} cannot be cached ({exc}); use hashable keys "
            f"or turn the cache off with stores.{self._name}.object.cache.size=0",
            store=self._name,
            key=key,
        )

    def __repr__(self) -> str:
        return f"CachedStore({self._name!r}, size={self._size}, batch={self._batch}, {self._inner!r})"


__all__ = ["CachedStore"]
