"""The KeyValueStore protocol and the error every store layer raises."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

from samza_nb.errors import SamzaError

K = TypeVar("K")
V = TypeVar("V")


class KeyValueStore(Protocol[K, V]):
    """A task's key-value store.

    Keys are ordered by their serialized bytes: :meth:`range` and :meth:`all` yield ``(key, value)`` tuples
    in that order. ``None`` is never a key, a value or a bound: passing it raises :class:`StoreError`
    naming the store (``delete`` removes a key; ``put(key, None)`` is an error). A value read from a cached
    store may be the very object that was put: do not modify it after ``put``.
    """

    def get(self, key: K) -> V | None:
        """The value of ``key``, or None."""
        ...

    def get_all(self, keys: Iterable[K]) -> dict[K, V]:
        """The values of those ``keys`` that have one (absent keys are left out)."""
        ...

    def put(self, key: K, value: V) -> None:
        """Set ``key`` to ``value``."""
        ...

    def put_all(self, entries: Iterable[tuple[K, V]]) -> None:
        """Set every ``(key, value)`` of ``entries``, in order; nothing is written if one is invalid."""
        ...

    def delete(self, key: K) -> None:
        """Remove ``key`` (a no-op when it is absent)."""
        ...

    def delete_all(self, keys: Iterable[K]) -> None:
        """Remove every key of ``keys``."""
        ...

    def range(self, from_key: K, to_key: K) -> Iterator[tuple[K, V]]:
        """The entries with ``from_key <= key < to_key`` (by serialized bytes), in key order.

        The entries are those of the call's moment: later writes do not show up in the iterator.
        """
        ...

    def all(self) -> Iterator[tuple[K, V]]:
        """Every entry, in key order (as of the call)."""
        ...

    def snapshot(self) -> list[tuple[K, V]]:
        """A stable copy of every entry, in key order."""
        ...

    def flush(self) -> None:
        """Push buffered writes down to the engine (they become durable with the next commit)."""
        ...

    def close(self) -> None:
        """Flush and release the store; it must not be used afterwards."""
        ...


class StoreError(SamzaError):
    """A store operation failed; :attr:`store` and (when one was involved) :attr:`key` name the culprit."""

    def __init__(self, message: str, *, store: str, key: Any = None) -> None:
        super().__init__(message)
        self.store = store
        self.key = key


def describe(obj: object, limit: int = 80) -> str:
    """A short ``repr`` for error messages."""
    text = repr(obj)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def none_error(store: str, what: str, op: str) -> StoreError:
    """The error for a None key, value or bound passed to ``op``."""
    return StoreError(f"store {store!r}: {op}() got None as {what}; None is not a valid {what}", store=store)


__all__ = ["K", "KeyValueStore", "StoreError", "V", "describe", "none_error"]
