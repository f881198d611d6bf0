"""Waiting on observed conditions instead of sleeping: the one helper every test uses for that.

``eventually(condition)`` polls ``condition`` until it returns a truthy value and returns that value; past
``timeout`` seconds it fails the test with ``message`` (and the last value seen). The timeout is a safety
net against hangs, never a measurement: pick it generously. ``aeventually`` is the same for async tests
(the condition may be a plain function or return an awaitable).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_TIMEOUT = 30.0
_FIRST_PAUSE = 0.001
_MAX_PAUSE = 0.05


def eventually(condition: Callable[[], T], *, timeout: float = DEFAULT_TIMEOUT, message: str = "") -> T:
    """Poll ``condition`` until it is truthy; return its value. Fails the test after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    pause = _FIRST_PAUSE
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(
                f"condition not reached within {timeout} s: {message or _describe(condition)} "
                f"(last value: {value!r})"
            )
        time.sleep(pause)  # a polling interval, not synchronisation: the condition decides
        pause = min(pause * 2, _MAX_PAUSE)


async def aeventually(
    condition: Callable[[], T | Awaitable[T]], *, timeout: float = DEFAULT_TIMEOUT, message: str = ""
) -> T:
    """:func:`eventually` inside an event loop: awaits between polls, so the loop keeps running."""
    deadline = time.monotonic() + timeout
    pause = _FIRST_PAUSE
    while True:
        value = condition()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(
                f"condition not reached within {timeout} s: {message or _describe(condition)} "
                f"(last value: {value!r})"
            )
        await asyncio.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE)


def _describe(condition: Callable[..., object]) -> str:
    return getattr(condition, "__qualname__", repr(condition))
