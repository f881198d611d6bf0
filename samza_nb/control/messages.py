"""Control messages that travel in-band on intermediate streams (Samza's ControlMessage family).

An upstream task sends them with its task name; an aggregating task re-broadcasts them without one (then
they count as final for the partition that receives them). Source watermarks (TestRunner's
``Watermark(ts)`` items, a Spark source's event time) arrive as a :class:`WatermarkMessage` without a task
name on a source partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

CONTROL_VERSION: Final = 1
"""The ``version`` field every control message carries (Samza's ControlMessage)."""

WATERMARK_NOT_EXIST: Final = -1
"""The watermark of a partition or stream before every producer reported one (Samza's constant)."""


@dataclass(frozen=True, slots=True)
class ControlMessage:
    """Base of the control messages: who sent it (``task_name``; None from an aggregator or a source)."""

    task_name: str | None = None
    version: int = CONTROL_VERSION


@dataclass(frozen=True, slots=True)
class EndOfStreamMessage(ControlMessage):
    """The sending task will send nothing more to this stream."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WatermarkMessage(ControlMessage):
    """Every message the sender sends after this one has an event time after ``timestamp`` (ms)."""

    timestamp: int


CONTROL_MESSAGE_TYPES: Final = (EndOfStreamMessage, WatermarkMessage)
"""The concrete control message classes (``type(message) in CONTROL_MESSAGE_TYPES`` is the hot-path test)."""


def is_control_message(message: object) -> bool:
    """True when ``message`` is a control message rather than a user message."""
    return type(message) in CONTROL_MESSAGE_TYPES


__all__ = [
    "CONTROL_MESSAGE_TYPES",
    "CONTROL_VERSION",
    "WATERMARK_NOT_EXIST",
    "ControlMessage",
    "EndOfStreamMessage",
    "WatermarkMessage",
    "is_control_message",
]
