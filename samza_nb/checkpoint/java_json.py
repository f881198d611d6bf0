"""JSON as Apache Samza's Jackson writes it: compact, in the iteration order of Java's ``HashMap``.

Samza serializes checkpoints from ``java.util.HashMap``s with Jackson, so the bytes it writes depend on the
order a HashMap iterates its keys in: by bucket (the key's ``hashCode`` spread and masked by the table
size), then by insertion order within a bucket. The table size follows from how the map was built and how
many keys went in. This module computes that order (:class:`JavaHashMap`), Java's ``String.hashCode`` and
``SystemStreamPartition.hashCode``, and writes JSON strings as Jackson does, so that samza_nb writes the
bytes a Java Samza job would. Known limit: a bucket of 8 or more keys (which Java turns into a tree or
answers with a resize) is not modelled; a checkpoint never has that many colliding keys in practice.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from samza_nb.api.streams import SystemStreamPartition

_INT_MASK: Final = 0xFFFFFFFF
_DEFAULT_CAPACITY: Final = 16
_LOAD_FACTOR: Final = 0.75


def java_string_hash(text: str) -> int:
    """Java's ``String.hashCode`` of ``text`` (over UTF-16 code units), as an unsigned 32-bit int."""
    result = 0
    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        result = (31 * result + (data[i] | data[i + 1] << 8)) & _INT_MASK
    return result


def java_ssp_hash(ssp: SystemStreamPartition) -> int:
    """``SystemStreamPartition.hashCode`` (samza-api): over the stream, the system and the partition."""
    result = (31 * (31 + java_string_hash(ssp.stream)) + java_string_hash(ssp.system)) & _INT_MASK
    result = (31 * result + ssp.partition) & _INT_MASK
    return (31 * result) & _INT_MASK  # + keyBucket, which is 0 when unset (-1)


def _table_size_for(n: int) -> int:
    size = 1
    while size < n:
        size <<= 1
    return size


class JavaHashMap:
    """The iteration order of a ``java.util.HashMap`` built one way and filled in a given order.

    ``JavaHashMap()`` is ``new HashMap<>()``, ``JavaHashMap(capacity=n)`` is ``new HashMap<>(n)`` and
    ``JavaHashMap(copy_of=n)`` is ``new HashMap<>(m)`` of a map ``m`` of n entries (its entries then
    ``put`` in ``m``'s order). Keys are distinct; ``order`` gives them in the order Java iterates them.
    """

    def __init__(self, capacity: int | None = None, copy_of: int | None = None) -> None:
        self._capacity = 0
        self._threshold = 0
        if capacity is not None:
            self._threshold = _table_size_for(capacity)
        if copy_of:
            wanted = int(copy_of / _LOAD_FACTOR + 1.0)
            if wanted > self._threshold:
                self._threshold = _table_size_for(wanted)
        self._keys: list[tuple[int, object]] = []

    def _resize(self) -> None:
        old_capacity, old_threshold = self._capacity, self._threshold
        if old_capacity > 0:
            self._capacity = old_capacity * 2
            self._threshold = (
                old_threshold * 2 if old_capacity >= _DEFAULT_CAPACITY else int(self._capacity * _LOAD_FACTOR)
            )
        elif old_threshold > 0:
            self._capacity = old_threshold
            self._threshold = int(self._capacity * _LOAD_FACTOR)
        else:
            self._capacity = _DEFAULT_CAPACITY
            self._threshold = int(_DEFAULT_CAPACITY * _LOAD_FACTOR)

    def put_all(self, keys: Iterable[tuple[int, object]]) -> JavaHashMap:
        """``put`` each ``(hashCode, key)`` (hashCode as an unsigned 32-bit int) in turn; returns self."""
        for hashed, key in keys:
            if self._capacity == 0:
                self._resize()
            self._keys.append((hashed, key))
            if len(self._keys) > self._threshold:
                self._resize()
        return self

    def order(self) -> list[object]:
        """The keys in Java's iteration order."""
        mask = self._capacity - 1

        def bucket(item: tuple[int, tuple[int, object]]) -> tuple[int, int]:
            index, (hashed, _) = item
            return (hashed ^ (hashed >> 16)) & mask, index

        return [key for _, (_, key) in sorted(enumerate(self._keys), key=bucket)]


def string_keys(keys: Iterable[str]) -> list[tuple[int, object]]:
    """``(hashCode, key)`` of each string key, for :meth:`JavaHashMap.put_all`."""
    return [(java_string_hash(key), key) for key in keys]


def java_order(keys: Sequence[str], capacity: int | None = None) -> list[str]:
    """String ``keys`` in the order a ``new HashMap<>(capacity)`` (default one when None) filled in their
    order iterates them."""
    ordered = JavaHashMap(capacity=capacity).put_all(string_keys(keys)).order()
    return [str(key) for key in ordered]


_ESCAPES: Final[dict[int, str]] = {
    **{code: f"\\u{code:04X}" for code in range(0x20)},
    0x08: "\\b",
    0x09: "\\t",
    0x0A: "\\n",
    0x0C: "\\f",
    0x0D: "\\r",
    ord('"'): '\\"',
    ord("\\"): "\\\\",
}


def json_string(text: str) -> str:
    """``text`` as a JSON string literal, escaped as Jackson escapes it (control characters, ``"`` and
    ``\\``; everything else, non-ASCII included, as is)."""
    return '"' + text.translate(_ESCAPES) + '"'


def json_object(entries: Iterable[tuple[str, str]]) -> str:
    """A compact JSON object of ``(name, JSON text of the value)`` pairs, in the given order."""
    return "{" + ",".join(f"{json_string(name)}:{value}" for name, value in entries) + "}"


def json_nullable(text: str | None) -> str:
    """A JSON string literal, or ``null``."""
    return "null" if text is None else json_string(text)


__all__ = [
    "JavaHashMap",
    "java_order",
    "java_ssp_hash",
    "java_string_hash",
    "json_nullable",
    "json_object",
    "json_string",
    "string_keys",
]
