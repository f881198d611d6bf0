"""An in-line host (samza_nb/container/loop/hosts.py) on its own: a segment that cancels the host before
the host's Task ever ran (a host made in the middle of a run) still gets its cancellation at its await, as
a Task of its own would give it, and its message is settled."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

from samza_nb.container.loop.hosts import InLineHost, first_step


class Settled:
    """Stands for a message's callback: records how it was settled."""

    offset = "7"

    def __init__(self) -> None:
        self.outcome: str | None = None

    def complete(self) -> None:
        self.outcome = "complete"

    def failure(self, error: BaseException) -> None:
        self.outcome = f"failure: {error}"


def test_a_host_cancelled_before_its_task_started_hands_the_cancellation_to_the_message() -> None:
    seen: list[str] = []
    lost: list[InLineHost] = []

    async def message() -> None:
        task = asyncio.current_task()
        assert task is not None
        task.cancel()  # asked in the segment that runs under a host whose Task has not run yet
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            seen.append("cancelled at its await")

    async def main() -> None:
        loop = asyncio.get_running_loop()
        host = InLineHost(loop, "p0 (in line)", lost.append)
        coroutine = message()
        context = contextvars.copy_context()
        yielded: Any = first_step(host, context, coroutine)
        callback = Settled()
        host.adopt(coroutine, yielded, context, callback)  # type: ignore[arg-type]
        while callback.outcome is None:
            await asyncio.sleep(0)
        assert callback.outcome == "complete"

    asyncio.run(asyncio.wait_for(main(), 10))
    assert seen == ["cancelled at its await"]
    assert lost == [], "nothing was lost: the message had been adopted"
