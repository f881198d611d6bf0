"""LoggedStore: every write goes to the task's changelog partition before it is applied."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

from samza_nb.errors import SamzaError
from samza_nb.storage.base import KeyValueStore, StoreError, describe, none_error

ChangelogSend = Callable[[bytes, "bytes | None"], None]
"""Sends one changelog record: ``(key bytes, value bytes)``, or ``(key bytes, None)`` for a delete."""


class LoggedStore:
    """A bytes store whose writes are sent to a changelog (``send``) first and applied to ``inner`` after.

    ``put``/``delete`` send one record then apply it; ``put_all``/``delete_all`` send every record, in order,
    then apply them as one batch. If ``send`` fails, the write is not applied and the error propagates
    (a :class:`SamzaError` unchanged, anything else as a :class:`StoreError` naming the store and key).
    Reads pass through.
    """

    def __init__(self, inner: KeyValueStore[bytes, bytes], send: ChangelogSend, store_name: str) -> None:
        self._inner = inner
        self._send = send
        self._name = store_name

    @property
    def inner(self) -> KeyValueStore[bytes, bytes]:
        """The bytes store below."""
        return self._inner

    def _log(self, key: bytes, value: bytes | None) -> None:
        try:
            self._send(key, value)
        except SamzaError:
            raise
        except Exception as exc:
            raise self._send_error(key, exc) from exc

    def _send_error(self, key: bytes, exc: Exception) -> StoreError:
        return StoreError(
            f"store {self._name!r}: sending the change of key {describe(key)} to the changelog failed: "
            f"{type(exc).__name__}: {exc}",
            store=self._name,
            key=key,
        )

    def _invalid(self, key: object, value: object, op: str) -> StoreError:
        """Checked before anything is sent, so the changelog never holds a write the store refused."""
        if key is None:
            return none_error(self._name, "key", op)
        if value is None:
            return none_error(self._name, "value", op)
        return StoreError(
            f"store {self._name!r}: {op}() got key {describe(key)} / value {describe(value)}; "
            "the logged layer takes bytes only",
            store=self._name,
            key=key,
        )

    def get(self, key: bytes) -> bytes | None:
        return self._inner.get(key)

    def get_all(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        return self._inner.get_all(keys)

    def put(self, key: bytes, value: bytes) -> None:
        if type(key) is not bytes or type(value) is not bytes:
            raise self._invalid(key, value, "put")
        self._log(key, value)
        self._inner.put(key, value)

    def put_all(self, entries: Iterable[tuple[bytes, bytes]]) -> None:
        if entries is None:
            raise none_error(self._name, "entries", "put_all")
        batch = entries if isinstance(entries, list) else list(entries)
        if set(map(type, itertools.chain.from_iterable(batch))) - {bytes}:
            for key, value in batch:
                if type(key) is not bytes or type(value) is not bytes:
                    raise self._invalid(key, value, "put_all")
        send = self._send
        key = b""
        try:
            for key, value in batch:
                send(key, value)
        except SamzaError:
            raise
        except Exception as exc:
            raise self._send_error(key, exc) from exc
        self._inner.put_all(batch)

    def delete(self, key: bytes) -> None:
        if type(key) is not bytes:
            raise self._invalid(key, b"", "delete")
        self._log(key, None)
        self._inner.delete(key)

    def delete_all(self, keys: Iterable[bytes]) -> None:
        if keys is None:
            raise none_error(self._name, "keys", "delete_all")
        batch = list(keys)
        for key in batch:
            if type(key) is not bytes:
                raise self._invalid(key, b"", "delete_all")
        for key in batch:
            self._log(key, None)
        self._inner.delete_all(batch)

    def range(self, from_key: bytes, to_key: bytes) -> Iterator[tuple[bytes, bytes]]:
        return self._inner.range(from_key, to_key)

    def all(self) -> Iterator[tuple[bytes, bytes]]:
        return self._inner.all()

    def snapshot(self) -> list[tuple[bytes, bytes]]:
        return self._inner.snapshot()

    def flush(self) -> None:
        self._inner.flush()

    def close(self) -> None:
        self._inner.close()

    def __repr__(self) -> str:
        return f"LoggedStore({self._name!r}, {self._inner!r})"


__all__ = ["ChangelogSend", "LoggedStore"]
