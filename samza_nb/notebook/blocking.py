"""Running a coroutine to its end from a synchronous cell, whether or not the kernel's loop is running."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

from samza_nb.container import event_loop

T = TypeVar("T")


def run_blocking(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to its end from synchronous code: on a new loop here, or, when this thread already
    runs a loop (a cell in a Jupyter kernel, whose loop is blocked while the cell runs), on a new loop in a
    helper thread. The awaitable must not need the blocked loop (a job's own coroutines do)."""

    async def wait() -> T:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return event_loop.run(wait())
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = event_loop.run(wait())
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, name="samza-nb blocking call")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


__all__ = ["run_blocking"]
