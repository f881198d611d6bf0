"""The run loop runs on a Task of its own (samza_nb/container/loop/hosts.py): code run on it that cancels it
(``asyncio.current_task().cancel()``, a timeout or task group it bound) fails the run in one line naming what
asked, never ends it as if its caller had cancelled it; the caller's own cancellation is a cancellation."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from samza_nb.errors import TaskFailedError
from samza_nb.testing import TestRunner


class CancelsTheLoop:
    """A sync task whose process, at offset 3, cancels the Task it runs on (the loop's)."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.offset == "3":
            task = asyncio.current_task()
            assert task is not None
            task.cancel()


def test_code_that_cancels_the_loops_task_fails_the_run_naming_the_task_partition_and_offset() -> None:
    expected = r"cancelled by code run on it \(task .Partition 0. at .*offset 3\)"
    with pytest.raises(TaskFailedError, match=expected):
        TestRunner.of(CancelsTheLoop).add_input("in", list(range(10))).run(timeout=60)


def test_cancelling_the_run_itself_is_still_a_cancellation() -> None:
    started = asyncio.Event()

    class Slow:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            started.set()
            await asyncio.sleep(3600)

    async def main() -> None:
        run = asyncio.ensure_future(TestRunner.of(Slow).add_input("in", [1]).run_async(timeout=60))
        await started.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
