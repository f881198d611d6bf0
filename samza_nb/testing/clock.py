"""A fake clock for fast, deterministic timer tests."""

from __future__ import annotations

import asyncio


class FakeClock:
    """Time that moves only when told to, or (``autojump``) jumps to the next deadline whenever the
    container would otherwise sleep, after letting every other ready coroutine run first.

    With autojump, window and commit timers of any period fire at once in real time but in the right order
    and number relative to the messages processed.
    """

    def __init__(self, start_ms: float = 0.0, autojump: bool = True, settle_rounds: int = 20) -> None:
        self._now = float(start_ms)
        self.autojump = autojump
        self._settle_rounds = settle_rounds
        self._changed = asyncio.Event() if not autojump else None

    def now_ms(self) -> float:
        """The fake time in ms."""
        return self._now

    def advance(self, ms: float) -> None:
        """Move time forward by ``ms``."""
        if ms < 0:
            raise ValueError("time cannot go back")
        self._now += ms
        if self._changed is not None:
            self._changed.set()

    async def wait(self, wakeup: asyncio.Event, timeout_ms: float | None) -> None:
        """Return when ``wakeup`` is set, or jump to the deadline once nothing else can run."""
        for _ in range(self._settle_rounds):
            if wakeup.is_set():
                return
            await asyncio.sleep(0)
        if timeout_ms is None:
            await wakeup.wait()
            return
        if self.autojump:
            self._now += max(timeout_ms, 0.0)
            return
        assert self._changed is not None
        deadline = self._now + timeout_ms
        while self._now < deadline and not wakeup.is_set():
            self._changed.clear()
            waiters = [asyncio.ensure_future(wakeup.wait()), asyncio.ensure_future(self._changed.wait())]
            _, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            for waiter in pending:
                waiter.cancel()
