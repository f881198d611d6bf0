"""Window definitions: tumbling and session windows over event time (or processing time)."""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from samza_nb.errors import SamzaError


class TimeCharacteristic(enum.Enum):
    """Which clock a window uses: event time (envelope timestamps, fired by watermarks) or processing
    time (the container's clock, fired on the window timer)."""

    EVENT = "event"
    PROCESSING = "processing"


class WindowKind(enum.Enum):
    """The shape of a window."""

    TUMBLING = "tumbling"
    SESSION = "session"


@dataclass(frozen=True)
class Window:
    """A window definition (make one with :class:`Windows`): ``size_ms`` is the tumbling size or the
    session gap; ``init()`` makes a pane's first accumulator and ``fold(message, acc)`` the next one;
    ``key_fn(message)`` groups messages (None: one pane per window, key None); ``timestamp_fn(message)``
    overrides the envelope's event time."""

    kind: WindowKind
    size_ms: int
    init: Callable[[], Any]
    fold: Callable[[Any, Any], Any]
    key_fn: Callable[[Any], Any] | None = None
    time: TimeCharacteristic = TimeCharacteristic.EVENT
    timestamp_fn: Callable[[Any], int] | None = None


class Windows:
    """Factories of window definitions (Samza's Windows)."""

    @staticmethod
    def tumbling(
        size_ms: int,
        init: Callable[[], Any],
        fold: Callable[[Any, Any], Any],
        key_fn: Callable[[Any], Any] | None = None,
        *,
        time: str | TimeCharacteristic = TimeCharacteristic.EVENT,
        timestamp_fn: Callable[[Any], int] | None = None,
    ) -> Window:
        """Fixed windows ``[n * size_ms, (n + 1) * size_ms)``; a pane fires when the input watermark
        reaches its end (event time) or on the window timer after its end (processing time)."""
        return _window(WindowKind.TUMBLING, "size_ms", size_ms, init, fold, key_fn, time, timestamp_fn)

    @staticmethod
    def session(
        gap_ms: int,
        init: Callable[[], Any],
        fold: Callable[[Any, Any], Any],
        key_fn: Callable[[Any], Any] | None = None,
        *,
        time: str | TimeCharacteristic = TimeCharacteristic.EVENT,
        timestamp_fn: Callable[[Any], int] | None = None,
    ) -> Window:
        """Per-key sessions: messages less than ``gap_ms`` apart belong to one session (sessions that a
        message bridges merge); a session fires when the watermark passes its last message + ``gap_ms``."""
        return _window(WindowKind.SESSION, "gap_ms", gap_ms, init, fold, key_fn, time, timestamp_fn)


def _window(
    kind: WindowKind,
    size_name: str,
    size_ms: int,
    init: Callable[[], Any],
    fold: Callable[[Any, Any], Any],
    key_fn: Callable[[Any], Any] | None,
    time: str | TimeCharacteristic,
    timestamp_fn: Callable[[Any], int] | None,
) -> Window:
    if not isinstance(size_ms, int) or isinstance(size_ms, bool) or size_ms <= 0:
        raise SamzaError(f"Windows.{kind.value}: {size_name} must be a positive int (ms), got {size_ms!r}")
    for name, fn in (("init", init), ("fold", fold)):
        if not callable(fn):
            raise SamzaError(f"Windows.{kind.value}: {name} must be callable, got {fn!r}")
    for name, optional in (("key_fn", key_fn), ("timestamp_fn", timestamp_fn)):
        if optional is not None and not callable(optional):
            raise SamzaError(f"Windows.{kind.value}: {name} must be callable or None, got {optional!r}")
    try:
        characteristic = TimeCharacteristic(time) if isinstance(time, str) else time
    except ValueError:
        raise SamzaError(
            f"Windows.{kind.value}: time must be 'event' or 'processing', got {time!r}"
        ) from None
    return Window(kind, size_ms, init, fold, key_fn, characteristic, timestamp_fn)


__all__ = ["TimeCharacteristic", "Window", "WindowKind", "Windows"]
