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


_LATE_S = 0.0001


class SystemClock:
    """Real monotonic time.

    Its timed waits share one timer while their deadline holds: a loop that wakes for every completion
    (an async task's messages) would otherwise arm and cancel a timer (``asyncio.timeout``) per wake-up.
    The timer sets the wake-up event when it fires; the loop clears that event before each wait.
    """

    __slots__ = ("_timer", "_timer_at", "_timer_event", "_timer_loop")

    def __init__(self) -> None:
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = 0.0  # the loop time it fires at
        self._timer_event: asyncio.Event | None = None  # the event it sets
        self._timer_loop: asyncio.AbstractEventLoop | None = None  # the loop it is armed on

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
        loop = asyncio.get_running_loop()
        at = loop.time() + timeout_ms / 1000.0
        timer = self._timer
        # The armed timer serves when it sets this event no later than ``at`` (earlier: a spare wake-up;
        # later by up to _LATE_S: the jitter of a deadline computed again each wait).
        if (
            timer is None
            or self._timer_event is not wakeup
            or self._timer_at > at + _LATE_S
            or self._timer_loop is not loop
        ):
            if timer is not None and self._timer_event is wakeup:
                timer.cancel()
            self._timer_at, self._timer_event, self._timer_loop = at, wakeup, loop
            self._timer = loop.call_at(at, self._fire, wakeup, at)
        await wakeup.wait()

    def _fire(self, wakeup: asyncio.Event, at: float) -> None:
        if self._timer_event is wakeup and self._timer_at == at:
            self._timer = None
        wakeup.set()
