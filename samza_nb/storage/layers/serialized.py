"""SerializedStore: objects in, bytes below — keys and values pass through their serdes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from samza_nb.serde.base import FastSerde, Serde
from samza_nb.serde.builtin import BYTES_TYPES
from samza_nb.storage.base import KeyValueStore, StoreError, describe, none_error


class SerializedStore:
    """A store of objects over a store of bytes (``inner``), with ``key_serde`` and ``msg_serde``.

    A key or value the serde cannot encode, and stored bytes it cannot decode, raise :class:`StoreError`
    naming the store and the key; a batch (``put_all``) with one bad entry writes nothing. Iteration order
    is that of the serialized keys.
    """

    def __init__(
        self, inner: KeyValueStore[bytes, bytes], key_serde: Serde, msg_serde: Serde, store_name: str
    ) -> None:
        self._inner = inner
        self._name = store_name
        self.key_serde = key_serde
        self.msg_serde = msg_serde
        self._kenc: Callable[[Any], bytes] = key_serde.to_bytes
        self._kdec: Callable[[bytes], Any] = key_serde.from_bytes
        self._venc: Callable[[Any], bytes] = msg_serde.to_bytes
        self._vdec: Callable[[bytes], Any] = msg_serde.from_bytes
        # Built-in serdes offer C-level encoders (`fast_to_bytes`) that give the same bytes and raise where
        # `to_bytes` refuses; a refusal is then redone with `to_bytes` for its exact error. The built-ins
        # always return bytes; other serdes' results are checked.
        self._kfast: Callable[[Any], bytes] = (
            key_serde.fast_to_bytes if isinstance(key_serde, FastSerde) else self._kenc
        )
        self._vfast: Callable[[Any], bytes] = (
            msg_serde.fast_to_bytes if isinstance(msg_serde, FastSerde) else self._venc
        )
        self._ktrusted = type(key_serde) in BYTES_TYPES
        self._vtrusted = type(msg_serde) in BYTES_TYPES

    @property
    def inner(self) -> KeyValueStore[bytes, bytes]:
        """The bytes store below."""
        return self._inner

    # -- encoding --------------------------------------------------------------------------------------
    def _key(self, key: Any, op: str, what: str = "key") -> bytes:
        if key is not None:
            try:
                data = self._kfast(key)
                if self._ktrusted or type(data) is bytes:
                    return data
            except Exception:
                pass
        return self._key_checked(key, op, what)

    def _key_checked(self, key: Any, op: str, what: str = "key") -> bytes:
        if key is None:
            raise none_error(self._name, what, op)
        try:
            data = self._kenc(key)
        except Exception as exc:
            raise self._encode_error(key, "key", exc) from exc
        if type(data) is not bytes:
            raise self._encode_error(key, "key", TypeError(f"the key serde returned {type(data).__name__}"))
        return data

    def _value(self, key: Any, value: Any, op: str) -> bytes:
        if value is not None:
            try:
                data = self._vfast(value)
                if self._vtrusted or type(data) is bytes:
                    return data
            except Exception:
                pass
        return self._value_checked(key, value, op)

    def _value_checked(self, key: Any, value: Any, op: str) -> bytes:
        if value is None:
            raise StoreError(
                f"store {self._name!r}: {op}() got None as the value of key {describe(key)}; None is not a "
                "valid value (use delete)",
                store=self._name,
                key=key,
            )
        try:
            data = self._venc(value)
        except Exception as exc:
            raise self._encode_error(key, f"value {describe(value)} of key", exc) from exc
        if type(data) is not bytes:
            raise self._encode_error(
                key, "value of key", TypeError(f"the serde returned {type(data).__name__}")
            )
        return data

    def _encode_error(self, key: Any, what: str, exc: BaseException) -> StoreError:
        return StoreError(
            f"store {self._name!r}: cannot encode the {what} {describe(key)}: {exc}",
            store=self._name,
            key=key,
        )

    def _decode_value(self, key: Any, data: bytes) -> Any:
        try:
            return self._vdec(data)
        except Exception as exc:
            raise StoreError(
                f"store {self._name!r}: cannot decode the stored value of key {describe(key)}: {exc}",
                store=self._name,
                key=key,
            ) from exc

    def _decode_key(self, data: bytes) -> Any:
        try:
            return self._kdec(data)
        except Exception as exc:
            raise StoreError(
                f"store {self._name!r}: cannot decode the stored key {describe(data)}: {exc}",
                store=self._name,
                key=data,
            ) from exc

    # -- the store API ---------------------------------------------------------------------------------
    def get(self, key: Any) -> Any:
        try:  # the fast path of `_key`, inline: a cache miss pays this call per new key
            encoded: Any = None if key is None else self._kfast(key)
        except Exception:
            encoded = None
        if encoded is None or not (self._ktrusted or type(encoded) is bytes):
            encoded = self._key_checked(key, "get")
        data = self._inner.get(encoded)
        return None if data is None else self._decode_value(key, data)

    def get_all(self, keys: Iterable[Any]) -> dict[Any, Any]:
        if keys is None:
            raise none_error(self._name, "keys", "get_all")
        by_bytes = {self._key(key, "get_all"): key for key in keys}
        found = self._inner.get_all(list(by_bytes))
        return {by_bytes[kb]: self._decode_value(by_bytes[kb], vb) for kb, vb in found.items()}

    def put(self, key: Any, value: Any) -> None:
        self._inner.put(self._key(key, "put"), self._value(key, value, "put"))

    def put_all(self, entries: Iterable[tuple[Any, Any]]) -> None:
        if entries is None:
            raise none_error(self._name, "entries", "put_all")
        kenc, venc = self._kfast, self._vfast
        batch = entries if isinstance(entries, list) else list(entries)
        encoded: list[tuple[bytes, bytes]] | None
        try:
            encoded = [(kenc(k), venc(v)) for k, v in batch if k is not None and v is not None]
        except Exception:
            encoded = None
        if (
            encoded is None
            or len(encoded) != len(batch)
            or (
                not (self._ktrusted and self._vtrusted)
                and not all(type(kb) is bytes and type(vb) is bytes for kb, vb in encoded)
            )
        ):  # redo it checked, for an error naming the culprit
            encoded = [
                (self._key_checked(k, "put_all"), self._value_checked(k, v, "put_all")) for k, v in batch
            ]
        self._inner.put_all(encoded)

    def delete(self, key: Any) -> None:
        self._inner.delete(self._key(key, "delete"))

    def delete_all(self, keys: Iterable[Any]) -> None:
        if keys is None:
            raise none_error(self._name, "keys", "delete_all")
        self._inner.delete_all([self._key(key, "delete_all") for key in keys])

    def range(self, from_key: Any, to_key: Any) -> Iterator[tuple[Any, Any]]:
        low = self._key(from_key, "range", "bound")
        high = self._key(to_key, "range", "bound")
        return self._decoded(self._inner.range(low, high))

    def all(self) -> Iterator[tuple[Any, Any]]:
        return self._decoded(self._inner.all())

    def snapshot(self) -> list[tuple[Any, Any]]:
        return list(self._decoded(iter(self._inner.snapshot())))

    def _decoded(self, entries: Iterator[tuple[bytes, bytes]]) -> Iterator[tuple[Any, Any]]:
        for kb, vb in entries:
            key = self._decode_key(kb)
            yield key, self._decode_value(key, vb)

    def flush(self) -> None:
        self._inner.flush()

    def close(self) -> None:
        self._inner.close()

    def __repr__(self) -> str:
        return f"SerializedStore({self._name!r}, {self.key_serde!r}, {self.msg_serde!r}, {self._inner!r})"


__all__ = ["SerializedStore"]
