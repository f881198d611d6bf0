"""The container's clock: where timers read the time and how the loop sleeps until the next one.

Injectable, so timer tests run in milliseconds and never flake (see ``samza_nb.testing.FakeClock``).
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    """Time in milliseconds, and a sleep that a wake-up event can cut short."""

    def now_ms(self) -> float:
        """The current time in ms (monotonic)."""
        ...

    async def wait(self, wakeup: asyncio.Event, timeout_ms: float | None) -> None:
        """Return when ``wakeup`` is set or ``timeout_ms`` passed (None: no time limit)."""
        ...


class SystemClock:
    """Real monotonic time."""

    __slots__ = ()

    def now_ms(self) -> float:
        """``time.monotonic()`` in ms."""
        return time.monotonic() * 1000.0

    async def wait(self, wakeup: asyncio.Event, timeout_ms: float | None) -> None:
        """Sleep on ``wakeup`` for at most ``timeout_ms``."""
        if wakeup.is_set():
            return
        if timeout_ms is None:
            await wakeup.wait()
            return
        if timeout_ms <= 0:
            await asyncio.sleep(0)
            return
        try:
            async with asyncio.timeout(timeout_ms / 1000.0):
                await wakeup.wait()
        except TimeoutError:
            pass
