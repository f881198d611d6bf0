"""Output of tasks on the loop thread goes through the container's buffer: visible at the latest when the
slice ends, before any commit, in send order across tasks; a refused message fails the task that sent it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, SystemStream
from samza_nb.errors import TaskFailedError
from tests.eventually import aeventually

from .harness import OUT, Job


class Forward:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


def test_output_is_visible_while_the_job_runs_long_before_a_commit() -> None:
    job = Job(task__commit__ms="3600000")
    job.broker.create_stream("out")
    container = job.container(Forward)

    async def scenario() -> None:
        runner = asyncio.ensure_future(container.run())
        job.send("in", list(range(10)))
        await aeventually(lambda: job.output() == {0: list(range(10))}, message="output never appeared")
        assert job.commits() == []
        job.send("in", [10])
        await aeventually(lambda: job.output()[0][-1:] == [10], message="later output never appeared")
        container.shutdown()
        await runner

    asyncio.run(asyncio.wait_for(scenario(), 10))


def test_outputs_of_several_tasks_keep_their_send_order() -> None:
    log: list[int] = []

    class Interleave:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            log.append(envelope.message)
            collector.send(OutgoingMessageEnvelope(OUT, envelope.message, partition=0))

    job = Job(inputs={"in": 3})
    job.broker.create_stream("out")
    for partition in range(3):
        job.send("in", [partition * 100 + i for i in range(5)], partition=partition)
    job.end()
    job.run(Interleave)
    assert log[:3] == [0, 100, 200]  # round robin: the tasks' sends interleave
    assert job.output() == {0: log}


@pytest.mark.parametrize("where", ["process", "window"])
def test_a_refused_output_fails_the_task_that_sent_it(where: str) -> None:
    bad = OutgoingMessageEnvelope(SystemStream("test", "out"), "x", partition=7)

    class Refused:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if where == "process":
                collector.send(bad)

        def window(self, collector: Any, coordinator: Any) -> None:
            collector.send(bad)

    job = Job(inputs={"in": 2}, task__window__ms="1")
    job.broker.create_stream("out")
    job.send("in", [1], partition=1)
    with pytest.raises(TaskFailedError, match=r"failed in send.*partition 7 does not exist") as info:
        job.run(Refused)
    if where == "process":
        assert info.value.task_name == "Partition 1"
