"""Checks and merges of batches of bytes changes, at C speed where it matters (used by the DuckDB engine)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def as_dict(items: list[Any]) -> dict[Any, Any] | None:
    try:
        return dict(items)
    except (TypeError, ValueError):  # an unhashable key, or an item that is not a pair
        return None


def all_bytes(batch: dict[Any, Any], *, allow_none: bool) -> bool:
    """True when every key of ``batch`` is bytes and every value bytes (or None when allowed); C-speed."""
    if not batch:
        return True
    value_types = set(map(type, batch.values()))
    if allow_none:
        value_types.discard(type(None))
    return set(map(type, batch)) == {bytes} and value_types <= {bytes}


def overlay(
    committed: Iterator[tuple[bytes, bytes]], changes: list[tuple[bytes, bytes | None]]
) -> Iterator[tuple[bytes, bytes]]:
    """Merge sorted committed rows with sorted pending changes (which win; None deletes)."""
    index, count = 0, len(changes)
    for key, value in committed:
        while index < count and changes[index][0] < key:
            change_key, change = changes[index]
            index += 1
            if change is not None:
                yield change_key, change
        if index < count and changes[index][0] == key:
            change = changes[index][1]
            index += 1
            if change is not None:
                yield key, change
            continue
        yield key, value
    for change_key, change in changes[index:]:
        if change is not None:
            yield change_key, change


__all__ = ["all_bytes", "as_dict", "overlay"]
