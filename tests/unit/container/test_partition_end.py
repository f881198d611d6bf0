"""Partition-end listeners (on_partition_end), done tasks as shutdown votes, and what TaskContext gives a
task of its container (publish, now_ms)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from samza_nb import RequestScope, SystemStream, SystemStreamPartition, TaskFailedError
from samza_nb.api.task import PartitionEndListenerTask
from samza_nb.observe.events import Committed, EndOfStreamReached, WatermarkAdvanced
from samza_nb.testing import FakeClock, LoopMode

from .harness import Job


class Listener:
    """Records messages and partition ends in one shared log, with the thread of each call."""

    def __init__(self, log: list[tuple[str, Any]]) -> None:
        self.log = log

    def init(self, context: Any) -> None:
        self.name = context.task_name

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.log.append((self.name, envelope.message))

    def on_partition_end(self, ssp: Any, collector: Any, coordinator: Any) -> None:
        self.log.append((self.name, ("ended", str(ssp), threading.get_ident())))

    def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
        self.log.append((self.name, "all ended"))


def test_a_partition_end_listener_is_told_of_each_partition_after_its_messages(loop_mode: LoopMode) -> None:
    assert isinstance(Listener([]), PartitionEndListenerTask)
    job = Job({"in": 2}, task__commit__ms="-1")
    for p in (0, 1):
        job.send("in", [f"{p}-{i}" for i in range(20)], partition=p)
    job.end()
    log: list[tuple[str, Any]] = []
    job.run(lambda: Listener(log), mode=loop_mode)
    for p in (0, 1):
        calls = [entry for task, entry in log if task == f"Partition {p}"]
        assert calls[:20] == [f"{p}-{i}" for i in range(20)]
        ended, ssp, thread = calls[20]
        assert (ended, ssp, thread) == ("ended", f"test.in#{p}", threading.get_ident())  # the loop's thread
        assert calls[21:] == ["all ended"]
    ends = [e for e in job.events if isinstance(e, EndOfStreamReached) and e.ssp is not None]
    assert sorted(str(e.ssp) for e in ends) == ["test.in#0", "test.in#1"]


def test_end_of_stream_waits_until_nothing_of_the_task_is_in_flight() -> None:
    class Slow:
        """An async task with messages in flight when its partition's end-of-stream is chosen."""

        def __init__(self) -> None:
            self.active = 0
            self.done = 0
            self.seen_at_end: list[tuple[int, int]] = []

        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            self.active += 1
            await asyncio.sleep(0.002)
            self.active -= 1
            self.done += 1

        def on_partition_end(self, ssp: Any, collector: Any, coordinator: Any) -> None:
            self.seen_at_end.append((self.active, self.done))

    job = Job({"in": 1}, task__max__concurrency="8")
    job.send("in", list(range(30)))
    job.end()
    task = Slow()
    job.run(lambda: task)
    assert task.seen_at_end == [(0, 30)]


def test_requests_of_on_partition_end_apply() -> None:
    class VoteAtEnd:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            pass

        def on_partition_end(self, ssp: Any, collector: Any, coordinator: Any) -> None:
            coordinator.commit(RequestScope.CURRENT_TASK)
            coordinator.shutdown(RequestScope.CURRENT_TASK)

    # "live" never ends: the task stops because on_partition_end of "in" voted.
    job = Job({"in": 1, "live": 1})
    job.send("in", ["a", "b"])
    job.send("live", ["x"])
    job.end("in")
    job.run(VoteAtEnd)
    assert job.checkpoint() == {"test.in#0": "1", "test.live#0": "0"}
    assert any(isinstance(e, Committed) for e in job.events)


def test_an_error_in_on_partition_end_fails_the_container_naming_task_and_partition() -> None:
    class Broken:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            pass

        def on_partition_end(self, ssp: Any, collector: Any, coordinator: Any) -> None:
            raise ValueError("cannot end")

    job = Job({"in": 1})
    job.send("in", [1, 2])
    job.end()
    with pytest.raises(TaskFailedError) as info:
        job.run(Broken)
    error = info.value
    assert error.task_name == "Partition 0" and str(error.ssp) == "test.in#0"
    assert "end-of-stream" in str(error) and "test.in#0" in str(error) and "cannot end" in str(error)
    assert job.checkpoint() == {}  # the container failed: no final commit


def test_a_task_done_by_end_of_stream_counts_as_a_shutdown_vote() -> None:
    class StopOnCue:
        """Partition 1 never ends; its task votes when it reads "stop"; Partition 0 ends and is done."""

        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.message == "stop":
                coordinator.shutdown(RequestScope.CURRENT_TASK)

    job = Job({"in": 2})
    job.send("in", [1, 2], partition=0)
    job.send("in", [3, "stop", 4], partition=1)
    job.broker.end_stream("in", [0])
    container = job.run(StopOnCue)
    assert container.tasks["Partition 0"].done and not container.tasks["Partition 1"].done
    # A task that voted goes on until every task voted (or is done): it may have processed "4" too.
    assert job.checkpoint("Partition 1")["test.in#1"] in {"1", "2"}


def test_the_task_context_publishes_on_the_bus_and_reads_the_containers_clock() -> None:
    clock = FakeClock(start_ms=1234.0)
    seen: list[float] = []

    class Publisher:
        def init(self, context: Any) -> None:
            seen.append(context.now_ms())
            ssp = SystemStreamPartition("test", "in", 0)
            context.publish(WatermarkAdvanced(0.0, context.task_name, SystemStream("test", "in"), ssp, 7))

        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            pass

    job = Job({"in": 1})
    job.end()
    job.run(Publisher, clock=clock)
    assert seen == [1234.0]
    (event,) = [e for e in job.events if isinstance(e, WatermarkAdvanced)]
    assert (event.task, event.watermark) == ("Partition 0", 7)
