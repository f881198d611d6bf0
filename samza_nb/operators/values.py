"""The values the high-level API hands to user functions: KV pairs and window panes."""

from __future__ import annotations

from typing import Any, NamedTuple


class KV(NamedTuple):
    """A key and a value: what ``partition_by`` emits (the key chose the partition)."""

    key: Any
    value: Any


class WindowPane(NamedTuple):
    """The result of one window for one key: ``value`` folded over the messages with event time in
    ``[start_ms, end_ms)`` (tumbling) or within one session (``end_ms`` = last message + gap)."""

    key: Any
    start_ms: int
    end_ms: int
    value: Any


__all__ = ["KV", "WindowPane"]
