"""A recording in-memory store (Samza's MockKeyValueStore plus call records) for layer tests."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class RecordingStore:
    """A sorted in-memory store that records the calls it receives (keys must be mutually comparable)."""

    def __init__(self) -> None:
        self.data: dict[Any, Any] = {}
        self.calls: list[tuple[str, Any]] = []

    def get(self, key: Any) -> Any:
        self.calls.append(("get", key))
        return self.data.get(key)

    def get_all(self, keys: Iterable[Any]) -> dict[Any, Any]:
        keys = list(keys)
        self.calls.append(("get_all", keys))
        return {k: self.data[k] for k in keys if k in self.data}

    def put(self, key: Any, value: Any) -> None:
        self.calls.append(("put", (key, value)))
        self.data[key] = value

    def put_all(self, entries: Iterable[tuple[Any, Any]]) -> None:
        entries = list(entries)
        self.calls.append(("put_all", entries))
        self.data.update(entries)

    def delete(self, key: Any) -> None:
        self.calls.append(("delete", key))
        self.data.pop(key, None)

    def delete_all(self, keys: Iterable[Any]) -> None:
        keys = list(keys)
        self.calls.append(("delete_all", keys))
        for key in keys:
            self.data.pop(key, None)

    def range(self, from_key: Any, to_key: Any) -> Iterator[tuple[Any, Any]]:
        return iter([(k, self.data[k]) for k in sorted(self.data) if from_key <= k < to_key])

    def all(self) -> Iterator[tuple[Any, Any]]:
        return iter(sorted(self.data.items()))

    def snapshot(self) -> list[tuple[Any, Any]]:
        return sorted(self.data.items())

    def flush(self) -> None:
        self.calls.append(("flush", None))

    def close(self) -> None:
        self.calls.append(("close", None))

    def count(self, name: str) -> int:
        return sum(1 for call, _ in self.calls if call == name)

    def args(self, name: str) -> list[Any]:
        return [arg for call, arg in self.calls if call == name]
