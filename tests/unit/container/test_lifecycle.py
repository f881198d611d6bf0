"""Container lifecycle: graceful stop (docs/architecture.md §3, rule 11), init/close, restart, misuse."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from samza_nb import ConfigError, RequestScope
from samza_nb.container import ContainerState
from samza_nb.errors import ContainerStateError
from samza_nb.observe.events import ContainerStarted, ContainerStopped

from .harness import Job


class Lifecycle:
    calls: list[str] = []

    def init(self, context: Any) -> None:
        Lifecycle.calls.append(f"init {context.task_name}")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Lifecycle.calls.append(f"process {envelope.offset}")

    def close(self) -> None:
        Lifecycle.calls.append("close")


def test_init_before_first_message_and_close_after_last_commit() -> None:
    Lifecycle.calls = []
    job = Job()
    job.send("in", ["a", "b"])
    job.end()
    container = job.run(Lifecycle)
    assert Lifecycle.calls == ["init Partition 0", "process 0", "process 1", "close"]
    assert container.state is ContainerState.STOPPED
    assert isinstance(job.events[0], ContainerStarted) and isinstance(job.events[-1], ContainerStopped)


def test_a_container_runs_once() -> None:
    job = Job()
    job.end()
    container = job.run(Lifecycle)
    with pytest.raises(ContainerStateError, match="already run"):
        asyncio.run(container.run())


def test_graceful_stop_lets_in_flight_messages_finish_and_commits_them() -> None:
    started = asyncio.Event()

    class Slow:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            started.set()
            await asyncio.sleep(0.05)

    job = Job(task__max__concurrency="5")
    job.send("in", list(range(5)))
    container = job.container(Slow)

    async def scenario() -> None:
        runner = asyncio.ensure_future(container.run())
        await started.wait()
        container.shutdown()
        await runner

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert job.checkpoint() == {"test.in#0": "4"}
    assert container.state is ContainerState.STOPPED


def test_graceful_stop_gives_up_on_messages_that_outlive_task_shutdown_ms() -> None:
    class Hanging:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "1":
                await asyncio.sleep(60)

    job = Job(task__max__concurrency="3", task__shutdown__ms="100")
    job.send("in", list(range(3)))
    container = job.container(Hanging)

    async def scenario() -> None:
        runner = asyncio.ensure_future(container.run())
        while container.processed < 3:
            await asyncio.sleep(0.01)
        container.shutdown()
        await runner

    asyncio.run(asyncio.wait_for(scenario(), 10))
    assert job.checkpoint() == {"test.in#0": "0"}  # 2 finished, but 1 did not: the low watermark is 0


def test_shutdown_before_start_stops_right_after_starting() -> None:
    job = Job()
    job.send("in", [1, 2, 3])
    container = job.container(Lifecycle)
    container.shutdown()
    asyncio.run(asyncio.wait_for(container.run(), 5))
    assert container.state is ContainerState.STOPPED


def test_max_messages_stops_after_that_many_and_commits() -> None:
    job = Job()
    job.send("in", list(range(10)))
    container = job.run(Lifecycle, max_messages=4)
    assert container.processed == 4
    assert job.checkpoint() == {"test.in#0": "3"}
    Lifecycle.calls = []
    job.end()
    job.run(Lifecycle)
    assert [c for c in Lifecycle.calls if c.startswith("process")] == [f"process {i}" for i in range(4, 10)]


def test_restart_resumes_after_the_checkpoint() -> None:
    seen: list[str] = []

    class Task:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            seen.append(envelope.offset)
            if envelope.offset == "4":
                coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)

    job = Job()
    job.send("in", list(range(8)))
    job.run(Task)
    assert job.checkpoint() == {"test.in#0": "4"}
    job.end()
    job.run(Task)
    assert seen == [str(i) for i in range(8)]


def test_a_missing_input_is_a_config_error_naming_task_inputs() -> None:
    job = Job()
    job.config.pop("task.inputs")
    with pytest.raises(ConfigError, match="task.inputs"):
        job.run(Lifecycle)


def test_a_failure_leaves_the_container_failed_and_closes_tasks() -> None:
    Lifecycle.calls = []

    class Failing(Lifecycle):
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            raise RuntimeError("x")

    job = Job()
    job.send("in", [1])
    container = job.container(Failing)
    with pytest.raises(Exception, match="x"):
        asyncio.run(container.run())
    assert container.state is ContainerState.FAILED
    assert Lifecycle.calls[-1] == "close"
