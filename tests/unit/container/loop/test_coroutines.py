"""An ``async def process`` runs in line until it first suspends (samza_nb/container/loop/coroutines.py):
one that never suspends needs no asyncio Task of its own; one that does goes on as the Task it ran under in
line (its task's host, samza_nb/container/loop/hosts.py), in flight with its callback. Every async guarantee
holds in every loop mode: each message once, outputs complete, concurrency limits, the low-watermark
checkpoint, context isolation, failures and timeouts, and what a message binds to the current task before
it first suspends (a timeout, a task group) acts on that message alone."""

from __future__ import annotations

import asyncio
import contextvars
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, RequestScope, SystemStream
from samza_nb.errors import SamzaError
from samza_nb.observe import Committed
from samza_nb.testing import LOOP_MODES, LoopMode, TestRunner

OUT = SystemStream("test", "out")
SEEN: contextvars.ContextVar[int | None] = contextvars.ContextVar("seen", default=None)


class NeverSuspends:
    """Sends each message; records which asyncio Task ran it."""

    tasks: list[asyncio.Task[Any] | None] = []

    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        NeverSuspends.tasks.append(asyncio.current_task())
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


class SometimesSuspends:
    """Every third message awaits (a real suspension); records the peak of messages in its await."""

    waiting = 0
    peak = 0

    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.message % 3 == 0:
            SometimesSuspends.waiting += 1
            SometimesSuspends.peak = max(SometimesSuspends.peak, SometimesSuspends.waiting)
            await asyncio.sleep(0.001 * (envelope.message % 5))
            SometimesSuspends.waiting -= 1
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


def values(result: Any) -> list[Any]:
    return sorted(v for vs in result.output("out").values() for v in vs)


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_coroutine_that_never_suspends_runs_in_line_without_a_task_per_message(mode: LoopMode) -> None:
    NeverSuspends.tasks = []
    result = (
        TestRunner.of(NeverSuspends, mode=mode)
        .add_input("in", {0: list(range(500)), 1: list(range(500, 1000))})
        .add_output("out")
        .run(timeout=60)
    )
    assert result.processed == 1000
    assert values(result) == list(range(1000))
    if not mode.observed:  # (observed, every message is in flight with its events, as before)
        # No Task per message: each ran under its task's standby host (loop/hosts.py), never the
        # container's own Task; two partitions, two tasks, two hosts.
        assert len({id(task) for task in NeverSuspends.tasks}) == 2
        assert all(t is not None and t.get_name().endswith("(in line)") for t in NeverSuspends.tasks)
    offsets = {str(ssp): offset for task in result.checkpoints.values() for ssp, offset in task.items()}
    assert offsets == {"test.in#0": "499", "test.in#1": "499"}, "the low watermark reached the end"


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_coroutines_that_sometimes_suspend_keep_every_guarantee(mode: LoopMode, concurrency: int) -> None:
    SometimesSuspends.waiting = SometimesSuspends.peak = 0
    result = (
        TestRunner.of(SometimesSuspends, mode=mode)
        .add_input("in", {0: list(range(300)), 1: list(range(300, 600))})
        .add_output("out")
        .add_config({"task.max.concurrency": str(concurrency)})
        .run(timeout=60)
    )
    assert result.processed == 600
    assert values(result) == list(range(600)), "each message once"
    assert SometimesSuspends.peak <= 2 * concurrency, "at most max.concurrency in flight per task"
    offsets = {str(ssp): offset for task in result.checkpoints.values() for ssp, offset in task.items()}
    assert offsets == {"test.in#0": "299", "test.in#1": "299"}, "the low watermark reached the end"


def test_the_low_watermark_holds_behind_a_suspended_message_while_later_ones_complete_in_line() -> None:
    release = asyncio.Event()

    class HoldFirst:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "0":
                await release.wait()
            elif envelope.offset == "5":
                coordinator.commit(RequestScope.CURRENT_TASK)  # asked while offset 0 is still in flight
            elif envelope.offset == "9":
                release.set()

    commits: list[str | None] = []
    runner = (
        TestRunner.of(HoldFirst)
        .add_input("in", list(range(10)))
        .add_config({"task.max.concurrency": "10", "task.commit.ms": "-1"})
        .subscribe(lambda event: commits.append(next(iter(event.offsets.values()), None)), [Committed])
    )
    result = runner.run(timeout=60)
    assert result.processed == 10
    # Offsets 1..9 completed in line long before 0 did; they and the request of 5 waited for 0's release:
    # the requested commit wrote 5 (not less: no offset went out while 0 was in flight), the last one 9.
    assert commits == ["5", "9"], commits


def test_each_message_has_its_own_context_as_a_task_would() -> None:
    class SetsAVar:
        seen: list[int | None] = []

        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            SetsAVar.seen.append(SEEN.get())
            SEEN.set(envelope.message)
            if envelope.message % 2:
                await asyncio.sleep(0)
                SetsAVar.seen.append(SEEN.get())  # its own value, after the suspension too

    TestRunner.of(SetsAVar).add_input("in", list(range(6))).run(timeout=60)
    before = SetsAVar.seen[::1]
    assert None in before and all(v is None or v % 2 for v in before), before
    assert [v for v in before if v is not None] == [1, 3, 5]


def test_a_coroutine_that_raises_before_it_suspends_fails_the_job_naming_the_offset() -> None:
    class Boom:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "3":
                raise ValueError("no good")

    with pytest.raises(SamzaError, match=r"offset 3.*no good|no good.*offset 3"):
        TestRunner.of(Boom).add_input("in", list(range(6))).run(timeout=60)


def test_a_suspended_coroutine_still_times_out() -> None:
    class Stuck:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "1":
                await asyncio.sleep(3600)

    runner = (
        TestRunner.of(Stuck)
        .add_input("in", list(range(3)))
        .add_config({"task.callback.timeout.ms": "50", "task.max.concurrency": "2"})
    )
    with pytest.raises(SamzaError, match="offset 1"):
        runner.run(timeout=60)


def test_once_coroutines_suspend_each_next_message_runs_in_a_task_of_its_own_from_its_start() -> None:
    """A task whose coroutines suspend starts the next ones as Tasks (no in-line try first): code that
    binds the current task before its first await (``asyncio.timeout``, task groups, client timeouts)
    binds the message's own Task, so its timeout cancels that message's await, not the container's."""

    class Timed:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "0":
                await asyncio.sleep(0.001)  # the first one suspends in line: the task suspends
                return
            try:
                async with asyncio.timeout(0.01):
                    await asyncio.sleep(5)
            except TimeoutError:
                collector.send(OutgoingMessageEnvelope(OUT, envelope.message))

    result = (
        TestRunner.of(Timed)
        .add_input("in", list(range(1, 7)))
        .add_output("out")
        .add_config({"task.max.concurrency": "3"})
        .run(timeout=60)
    )
    assert result.processed == 6
    assert values(result) == list(range(2, 7)), "each timed-out message sent once, in its own Task"


class TimedFromTheStart:
    """Every message, the very first of the job too, bounds its await with ``asyncio.timeout``."""

    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        try:
            async with asyncio.timeout(0.01):
                await asyncio.sleep(5)
        except TimeoutError:
            collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_timeout_entered_before_the_first_suspension_cancels_that_await_only(mode: LoopMode) -> None:
    """The first segment of the first messages runs in line: ``asyncio.current_task()`` there is a Task
    of the message's own (its task's host, which drives it on once it suspends), so the timeout cancels the
    message's sleep, never the container's Task (on main 2 of 6 messages were lost and the run ended
    without an error)."""
    result = (
        TestRunner.of(TimedFromTheStart, mode=mode)
        .add_input("in", {0: list(range(1, 4)), 1: list(range(4, 7))})
        .add_output("out")
        .add_config({"task.max.concurrency": "3"})
        .run(timeout=60)
    )
    assert result.processed == 6
    assert values(result) == list(range(1, 7)), "each timed-out message sent once"
    offsets = {str(ssp): offset for task in result.checkpoints.values() for ssp, offset in task.items()}
    assert offsets == {"test.in#0": "2", "test.in#1": "2"}, "the low watermark reached the end"


def test_a_task_group_in_the_first_segment_cancels_its_own_message_when_a_child_fails() -> None:
    """A TaskGroup entered in line has the message's Task as its parent: a failing child cancels the
    sibling and that message's wait, which gets the ExceptionGroup; the container runs on."""

    class Grouped:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            async def fails() -> None:
                await asyncio.sleep(0.001)
                raise ValueError(envelope.message)

            try:
                async with asyncio.TaskGroup() as group:
                    slow = group.create_task(asyncio.sleep(5))
                    group.create_task(fails())
            except* ValueError:
                collector.send(OutgoingMessageEnvelope(OUT, envelope.message if slow.cancelled() else -1))

    result = (
        TestRunner.of(Grouped)
        .add_input("in", list(range(4)))
        .add_output("out")
        .add_config({"task.max.concurrency": "2"})
        .run(timeout=60)
    )
    assert result.processed == 4
    assert values(result) == list(range(4)), "each group failed its own message only, once"


def test_a_message_that_cancels_its_own_task_before_it_suspends_cancels_its_own_await() -> None:
    """``asyncio.current_task().cancel()`` asked for in the first segment lands on the message's await
    (as in a Task of its own), not on the container's Task."""

    class CancelsItself:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            me = asyncio.current_task()
            assert me is not None
            asyncio.get_running_loop().call_soon(me.cancel)
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                me.uncancel()
                assert asyncio.current_task() is me, "the same Task before and after the suspension"
                collector.send(OutgoingMessageEnvelope(OUT, envelope.message))

    result = TestRunner.of(CancelsItself).add_input("in", list(range(3))).add_output("out").run(timeout=60)
    assert result.processed == 3
    assert values(result) == [0, 1, 2]


def test_a_message_that_cancels_its_task_then_awaits_gets_the_cancellation_at_that_await() -> None:
    """``asyncio.current_task().cancel()`` called directly in the first segment, then an await: as in a
    Task of its own, the await raises CancelledError (the message handles it), and nothing fails the job."""

    class CancelsThenAwaits:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            me = asyncio.current_task()
            assert me is not None
            me.cancel()
            try:
                await asyncio.sleep(5)
            except asyncio.CancelledError:
                collector.send(OutgoingMessageEnvelope(OUT, envelope.message))

    result = (
        TestRunner.of(CancelsThenAwaits).add_input("in", list(range(3))).add_output("out").run(timeout=60)
    )
    assert result.processed == 3
    assert values(result) == [0, 1, 2]


def test_a_cancellation_raised_in_line_fails_the_job_naming_the_offset() -> None:
    """A coroutine that raises CancelledError before it suspends fails its message (as a Task's
    cancellation does), loudly, instead of cancelling the container's Task."""

    class RaisesCancelled:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "2":
                raise asyncio.CancelledError

    with pytest.raises(SamzaError, match=r"offset 2 was cancelled"):
        TestRunner.of(RaisesCancelled).add_input("in", list(range(5))).run(timeout=60)


def test_a_message_that_cancels_its_task_and_returns_in_line_fails_the_job() -> None:
    """As a Task cancelled by its own message ends cancelled (and fails it), a message that cancels the
    current task in line and returns fails the job, loudly; the message after it, which suspends, still
    runs on (nothing hangs)."""

    class CancelsAndReturns:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "0":
                task = asyncio.current_task()
                assert task is not None
                task.cancel()
            else:
                await asyncio.sleep(0.001)

    with pytest.raises(SamzaError, match="cancelled its own asyncio Task"):
        TestRunner.of(CancelsAndReturns).add_input("in", list(range(3))).run(timeout=60)
