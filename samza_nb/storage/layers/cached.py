"""CachedStore: a write-behind object cache over a serialized store (Samza's CachedStore, made cheap).

Maps of Python objects:

- the **dirty map** holds every change since the last write below (``None`` marks a delete): the values
  that cannot change (numbers, strings, bytes: :data:`~samza_nb.storage.values.PLAIN`) in one dict, the
  store's own copies of the others (dicts, lists, ...) in a second, each key in one of them. It is not
  bounded by the cache size: changes are written below (serialized, then sent to the changelog and the
  engine) once, when the store is flushed before each commit, or early when the map reaches
  ``write_batch_size`` entries (a memory bound, default 100,000). Repeated writes of a key between two
  writes below cost one entry and write only the latest value.
- the **clean cache** is an LRU of at most ``cache_size`` values read from below (absence too). Evicting
  from it never writes anything. When the dirty map is written below, its entries become the most
  recently used clean entries.

``get`` looks at the dirty map, then the clean cache, then the store below. ``range``, ``all``,
``snapshot``, ``flush`` and ``close`` write the dirty map below first.

So a task that reads and updates a key of plain values pays one C-level dictionary lookup for the read
(``get`` *is* the plain dirty map's ``__getitem__``; a miss reads through) and one dictionary store for the
write, and serialization is paid once per key per commit rather than once per write. A task never holds an
object the cache keeps: a value that can change is copied (:func:`~samza_nb.storage.values.copy_value`)
when it is put and each time it is read, so changing it without a put changes nothing, in this run as after
a restart. Keys must be hashable:
``get`` of an unhashable key raises Python's own ``TypeError`` (as a dict does), ``put`` and ``delete`` a
:class:`StoreError` naming the store and the key.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Final

from samza_nb.errors import ConfigError
from samza_nb.storage.base import KeyValueStore, StoreError, describe, none_error
from samza_nb.storage.values import PLAIN, STORABLE_PLAIN, copy_value

_MISSING: Final[Any] = object()


class _Changes(dict[Any, Any]):
    """The dirty map of plain values (and deletes): a dict whose misses (``changes[key]`` of a key without
    such a change) read through the changed values that can change (``boxed``, the store's own copies), the
    clean cache (an LRU of ``size`` entries) and ``read_below``, so that a hit costs one C-level lookup and
    a miss one Python frame. What a miss returns is a copy when it can change (``copy_value``).

    ``complete`` is True while the clean cache and the changes hold every key the store below holds (it
    was empty when first asked, and the cache has evicted nothing since): a miss is then an absent key,
    answered without reading below. None until the first miss asks ``below_is_empty``.
    """

    __slots__ = ("_below_is_empty", "_clean", "_read_below", "_size", "_store", "boxed", "complete")

    def __init__(
        self,
        clean: OrderedDict[Any, Any],
        read_below: Callable[[Any], Any],
        size: int,
        store: str,
        below_is_empty: Callable[[], bool] | None,
    ) -> None:
        super().__init__()
        self.boxed: dict[Any, Any] = {}
        """Changes to values that can change: key -> the store's own copy (never None; never a key of the
        plain changes)."""
        self._clean = clean
        self._read_below = read_below
        self._size = size
        self._store = store
        self._below_is_empty = below_is_empty
        self.complete: bool | None = None if below_is_empty is not None else False

    def __missing__(self, key: Any) -> Any:
        boxed = self.boxed
        if boxed:
            value = boxed.get(key, _MISSING)
            if value is not _MISSING:
                return copy_value(value)
        clean = self._clean
        value = clean.get(key, _MISSING)
        if value is not _MISSING:
            clean.move_to_end(key)
            return value if type(value) in PLAIN else copy_value(value)
        if key is None:
            raise none_error(self._store, "key", "get")
        complete = self.complete
        if complete is None:
            complete = self.below_complete()
        if complete:
            return None  # every key below is in memory: this one is absent
        value = self._read_below(key)
        # cache the value read below (absence too), evicting the least recently used; the task gets a copy
        clean[key] = value
        if len(clean) > self._size:
            clean.popitem(last=False)
        return value if type(value) in PLAIN else copy_value(value)

    def below_complete(self) -> bool:
        """True while every key below is in memory; the first call asks ``below_is_empty``."""
        complete = self.complete
        if complete is None:
            below_is_empty = self._below_is_empty
            complete = self.complete = below_is_empty is not None and below_is_empty()
        return complete


class CachedStore:
    """A write-behind cache over ``inner``: changes as objects until the next flush (or until
    ``write_batch_size`` of them wait), and an LRU of ``cache_size`` clean values.

    A size below 1 is a :class:`ConfigError` naming ``stores.<store_name>.object.cache.size`` (or
    ``.write.batch.size``). Not thread-safe by itself: wrap it in
    :class:`~samza_nb.storage.layers.synchronized.SynchronizedStore` when several threads use the store.

    When writing the changes below fails with a :class:`StoreError` naming a key (a value its serde cannot
    encode), that key's change is dropped and the other changes stay dirty; the error propagates from
    whichever call wrote them (a flush, or the write that filled the batch).

    ``below_is_empty`` (optional) says whether ``inner`` holds nothing; it is asked once, at the first read
    that misses the cache (after any restore). When it says so, reads of keys the cache does not hold are
    answered "absent" without reading below, for as long as the cache evicts nothing (a new store whose
    keys fit in ``cache_size`` never reads below).
    """

    def __init__(
        self,
        inner: KeyValueStore[Any, Any],
        cache_size: int,
        write_batch_size: int,
        store_name: str,
        *,
        below_is_empty: Callable[[], bool] | None = None,
    ) -> None:
        if write_batch_size < 1:
            key = f"stores.{store_name}.write.batch.size"
            raise ConfigError(f"{key}={write_batch_size} is not valid: expected an integer >= 1", key=key)
        if cache_size < 1:
            key = f"stores.{store_name}.object.cache.size"
            raise ConfigError(
                f"{key}={cache_size} is not valid for a cache: expected >= 1 (0 turns the cache off)", key=key
            )
        self._inner = inner
        self._name = store_name
        self._size = cache_size
        self._batch = write_batch_size
        self._clean: OrderedDict[Any, Any] = OrderedDict()  # key -> value read below, None = known absent
        # key -> latest unwritten plain value, None = delete; oldest first (values that can change wait in
        # ``_boxed``). One map for the store's life (emptied in place when written below), so that ``get``
        # can be its C-level lookup.
        self._dirty = _Changes(self._clean, inner.get, cache_size, store_name, below_is_empty)
        self._boxed = self._dirty.boxed
        self.get = self._dirty.__getitem__
        self.batch_writes = 0
        """How many times the changes were written below (for metrics and tests)."""

    @property
    def inner(self) -> KeyValueStore[Any, Any]:
        """The store below."""
        return self._inner

    @property
    def cache_size(self) -> int:
        """The most clean entries the cache keeps."""
        return self._size

    @property
    def write_batch_size(self) -> int:
        """The number of waiting changes that makes the store write them below before the next flush."""
        return self._batch

    def cached_count(self) -> int:
        """Clean entries in the cache now."""
        return len(self._clean)

    def dirty_count(self) -> int:
        """Changes not yet written below."""
        return len(self._dirty) + len(self._boxed)

    # -- reads -----------------------------------------------------------------------------------------
    get: Callable[[Any], Any]
    """The value of ``key`` (None when absent), the task's own (a copy when it can change): its change, else
    the clean cache, else the store below. Bound in ``__init__`` to the plain dirty map's C-level lookup,
    whose misses read through (``_Changes``)."""

    def get_all(self, keys: Iterable[Any]) -> dict[Any, Any]:
        if keys is None:
            raise none_error(self._name, "keys", "get_all")
        dirty, boxed, clean = self._dirty, self._boxed, self._clean
        result: dict[Any, Any] = {}
        misses: list[Any] = []
        for key in keys:
            if key is None:
                raise none_error(self._name, "key", "get_all")
            try:
                value = dirty.get(key, _MISSING)
                if value is _MISSING:
                    value = boxed.get(key, _MISSING)
                if value is _MISSING:
                    value = clean.get(key, _MISSING)
                    if value is _MISSING:
                        misses.append(key)
                        continue
                    clean.move_to_end(key)
            except TypeError as exc:
                raise self._unhashable(key, exc) from None
            if value is not None:
                result[key] = copy_value(value)
        if misses and not self._dirty.below_complete():
            found = self._inner.get_all(misses)
            for key in misses:
                value = found.get(key)
                self._remember(key, value)
                if value is not None:
                    result[key] = copy_value(value)
        return result

    def _remember(self, key: Any, value: Any) -> None:
        """Cache a clean value read from below, evicting the least recently used beyond the size."""
        clean = self._clean
        clean[key] = value
        if len(clean) > self._size:
            clean.popitem(last=False)
            self._dirty.complete = False

    # -- writes ----------------------------------------------------------------------------------------
    def put(self, key: Any, value: Any) -> None:
        dirty = self._dirty
        try:
            # A plain value of a key changed since the last write below (never None): no bound to check.
            if key in dirty and type(value) in STORABLE_PLAIN:
                dirty[key] = value
                return
        except TypeError as exc:
            raise self._unhashable(key, exc) from None
        if key is None or value is None:
            raise none_error(self._name, "key" if key is None else "value", "put")
        boxed = self._boxed
        try:
            if type(value) in PLAIN:
                if boxed:
                    boxed.pop(key, None)
                dirty[key] = value
            else:
                own = self._own(key, value)  # the store's own: the task may go on changing its object
                dirty.pop(key, None)
                boxed[key] = own
        except TypeError as exc:
            raise self._unhashable(key, exc) from None
        if len(dirty) + len(boxed) >= self._batch:
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
        dirty, boxed = self._dirty, self._boxed
        try:
            if boxed:
                boxed.pop(key, None)
            dirty[key] = None
        except TypeError as exc:
            raise self._unhashable(key, exc) from None
        if len(dirty) + len(boxed) >= self._batch:
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
        """Write every change below (puts in one batch: plain values oldest first, then the others; deletes
        in another); the written entries become the most recently used clean entries (the store's own
        copies: nothing a task holds)."""
        if not self._dirty and not self._boxed:
            return
        dirty, boxed = dict(self._dirty), dict(self._boxed)
        self._dirty.clear()
        self._boxed.clear()
        puts = [(key, value) for key, value in dirty.items() if value is not None]
        deletes = [key for key, value in dirty.items() if value is None] if len(puts) < len(dirty) else []
        puts.extend(boxed.items())
        try:
            if puts:
                self._inner.put_all(puts)
            if deletes:
                self._inner.delete_all(deletes)
        except BaseException as exc:
            self._keep_unwritten(dirty, boxed, exc)
            raise
        self.batch_writes += 1
        clean, size = self._clean, self._size
        for changes in (dirty, boxed):
            for key, value in changes.items():
                clean[key] = value
                clean.move_to_end(key)
        if len(clean) > size:
            self._dirty.complete = False  # an evicted key is below and no longer in memory
            while len(clean) > size:
                clean.popitem(last=False)

    def _keep_unwritten(self, dirty: dict[Any, Any], boxed: dict[Any, Any], exc: BaseException) -> None:
        """After a failed write below: the changes stay dirty (under newer ones), except the culprit's."""
        newer, newer_boxed = dict(self._dirty), dict(self._boxed)
        self._dirty.clear()
        self._boxed.clear()
        self._dirty.update(dirty)
        self._boxed.update(boxed)
        for key, value in newer.items():
            self._boxed.pop(key, None)
            self._dirty[key] = value
        for key, value in newer_boxed.items():
            self._dirty.pop(key, None)
            self._boxed[key] = value
        culprit = exc.key if isinstance(exc, StoreError) else None
        if culprit is not None:
            self._dirty.complete = False  # the culprit's value below (if any) is no longer in memory
            try:
                self._dirty.pop(culprit, None)
                self._boxed.pop(culprit, None)
                self._clean.pop(culprit, None)
            except TypeError:  # an unhashable culprit cannot be in any map
                pass

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

    def _own(self, key: Any, value: Any) -> Any:
        """A copy of ``value`` for the store to keep; a StoreError naming the key when it cannot be copied."""
        try:
            return copy_value(value)
        except Exception as exc:
            raise StoreError(
                f"store {self._name!r}: cannot copy the value {describe(value)} of key {describe(key)} "
                f"({exc}); the store keeps a copy of every value put: put values its serde can encode",
                store=self._name,
                key=key,
            ) from exc

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
