"""The system clock's waits: cut short by the wake-up event, ended by their timeout, and sharing one timer
while their deadline holds (a loop woken by every completion arms no timer per wake-up)."""

from __future__ import annotations

import asyncio
from typing import Any

from samza_nb.container.clock import SystemClock


def counting_loop() -> tuple[asyncio.AbstractEventLoop, list[float]]:
    """A new event loop whose ``call_at`` records each timer armed."""
    loop = asyncio.new_event_loop()
    armed: list[float] = []
    call_at = loop.call_at

    def counted(when: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
        armed.append(when)
        return call_at(when, callback, *args, **kwargs)

    loop.call_at = counted  # type: ignore[method-assign]
    return loop, armed


def test_waits_cut_short_by_the_event_share_one_timer_for_their_deadline() -> None:
    loop, armed = counting_loop()
    clock = SystemClock()

    async def main() -> None:
        wakeup = asyncio.Event()
        deadline = clock.now_ms() + 60_000
        for _ in range(50):
            wakeup.clear()
            asyncio.get_running_loop().call_soon(wakeup.set)  # a completion wakes the loop
            await clock.wait(wakeup, deadline - clock.now_ms())

    try:
        loop.run_until_complete(main())
    finally:
        loop.close()
    assert len(armed) == 1, f"{len(armed)} timers armed for 50 waits on one deadline"


def test_a_wait_ends_at_its_timeout_and_an_earlier_deadline_rearms() -> None:
    clock = SystemClock()

    async def main() -> list[float]:
        wakeup = asyncio.Event()
        waited = []
        for timeout_ms in (60_000.0, 20.0, 10.0):  # the first cut short; then earlier deadlines
            wakeup.clear()
            if timeout_ms > 1000:
                asyncio.get_running_loop().call_soon(wakeup.set)
            start = clock.now_ms()
            await asyncio.wait_for(clock.wait(wakeup, timeout_ms), 5)
            waited.append(clock.now_ms() - start)
        return waited

    waited = asyncio.run(main())
    assert waited[1] >= 19 and waited[2] >= 9, waited  # each ran to its own timeout, no sooner
    assert waited[1] < 2000 and waited[2] < 2000, waited  # and woke then (not at the 60 s timer)
