"""Steering a running container (docs/architecture.md §3 rule 13): pause, step, resume, live
knobs and hot swap, on the real in-memory system and real DuckDB stores, with the job's loop on its own
thread and the test steering it from this one."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope
from samza_nb.container import ContainerState, SamzaContainer
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.testing import LOOP_MODES, LoopMode
from tests.eventually import eventually

from .harness import OUT, Job

STORE = {
    "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "stores.counts.key.serde": "string",
    "stores.counts.msg.serde": "int",
}


class Counter:
    """Counts each message's value in store "counts" and sends ``<version>:<value>=<count>``."""

    version = "v1"

    def init(self, context: Any) -> None:
        self.store = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        count = (self.store.get(envelope.message) or 0) + 1
        self.store.put(envelope.message, count)
        collector.send(
            OutgoingMessageEnvelope(OUT, f"{self.version}:{envelope.offset}:{envelope.message}={count}")
        )


class CounterV2(Counter):
    version = "v2"


class BrokenInit(Counter):
    def init(self, context: Any) -> None:
        raise ValueError("no database today")  # the line the swap's error names


class Echo:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


def job(tmp_path: Path, partitions: int = 1, **config: Any) -> Job:
    return Job({"in": partitions}, **STORE, **{"job.logged.store.base.dir": str(tmp_path)}, **config)


class Running:
    """``container.run()`` on an event loop of its own thread."""

    def __init__(self, container: SamzaContainer) -> None:
        self.container = container
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="job under test")

    def _run(self) -> None:
        try:
            asyncio.run(self.container.run())
        except BaseException as exc:
            self.error = exc

    def start(self) -> Running:
        self.thread.start()
        eventually(lambda: self.container.state is ContainerState.RUNNING, message="the job runs")
        return self

    def join(self) -> None:
        self.thread.join(30)
        assert not self.thread.is_alive(), "the job did not end"
        if self.error is not None:
            raise self.error


@pytest.fixture
def running() -> Iterator[list[Running]]:
    started: list[Running] = []
    yield started
    for run in started:
        if run.thread.is_alive():
            run.container.shutdown()  # (a paused job stops too)
            run.thread.join(30)


def start(running: list[Running], container: SamzaContainer) -> Running:
    run = Running(container).start()
    running.append(run)
    return run


def outputs(j: Job) -> list[str]:
    return [str(value) for values in j.output().values() for value in values]


def buffered(container: SamzaContainer) -> int:
    consumers = container._consumers
    assert consumers is not None
    return sum(len(buffer) for buffer in consumers.buffers.values())


# -- pause and resume ---------------------------------------------------------------------------------------
def test_a_paused_job_processes_nothing_while_input_waits_and_resumes_where_it_stopped(
    tmp_path: Path, running: list[Running], loop_mode: LoopMode
) -> None:
    j = job(tmp_path)
    container = j.container(Counter, loop_mode)
    run = start(running, container)
    j.send("in", ["a", "b", "a"] * 10)
    eventually(lambda: container.processed == 30)
    assert not container.steering.paused
    container.steering.pause()
    container.steering.pause()  # idempotent
    assert container.steering.paused
    held = container.processed
    j.send("in", ["c"] * 50)
    eventually(lambda: buffered(container) > 0, message="the paused loop fetched the new input")
    assert container.processed == held
    counts = asyncio.run(container.query_store("counts", "SELECT key, value FROM counts ORDER BY key"))
    assert counts.rows == [("a", 20), ("b", 10)], "the pause committed: SQL shows the paused state"
    container.steering.resume()
    eventually(lambda: not container.steering.paused, message="the resume reached the loop")
    j.end()
    run.join()
    assert container.processed == 80
    assert len(outputs(j)) == 80


def test_pause_before_the_run_starts_the_job_paused(tmp_path: Path, running: list[Running]) -> None:
    j = job(tmp_path)
    j.send("in", ["a"] * 5)
    container = j.container(Counter)
    container.steering.pause()
    assert container.steering.paused, "before the start: it will start paused"
    run = start(running, container)
    eventually(lambda: buffered(container) > 0 or container.processed > 0)
    assert container.processed == 0
    container.steering.resume()
    j.end()
    run.join()
    assert container.processed == 5


def test_pause_and_resume_come_from_another_thread_while_run_goes_on(
    tmp_path: Path, running: list[Running]
) -> None:
    j = job(tmp_path)
    container = j.container(Counter)
    run = start(running, container)
    done = threading.Event()
    seen: list[int] = []

    def steer() -> None:
        for _ in range(5):
            container.steering.pause()
            seen.append(container.processed)
            container.steering.resume()
        done.set()

    steering = threading.Thread(target=steer)
    steering.start()
    for i in range(20):
        j.send("in", [f"k{i}"] * 10)
    steering.join(30)
    assert done.is_set() and len(seen) == 5
    assert seen == sorted(seen)
    j.end()
    run.join()
    assert container.processed == 200


def test_the_blocking_methods_refuse_the_job_loops_own_thread(tmp_path: Path) -> None:
    j = job(tmp_path)
    container = j.container(Counter)

    async def scenario() -> list[str]:
        job_run = asyncio.ensure_future(container.run())
        while container.state is not ContainerState.RUNNING:
            await asyncio.sleep(0)  # (yielding to the job's start on this loop)
        with pytest.raises(SamzaError, match=r"await pause_async\(\)"):
            container.steering.pause()
        await container.steering.pause_async()
        j.send("in", ["x", "y"])
        j.end()
        steps = await container.steering.step_async(5)  # two messages, then the end ends the job
        await job_run
        return [step.message for step in steps]

    assert asyncio.run(scenario()) == ["x", "y"]


# -- steps --------------------------------------------------------------------------------------------------
def test_step_processes_exactly_n_in_each_partitions_order_with_reasons_outputs_and_writes(
    tmp_path: Path, running: list[Running], loop_mode: LoopMode
) -> None:
    j = job(tmp_path, partitions=2)
    for partition in (0, 1):
        j.send("in", ["a", "b", "a", "c", "a"], partition=partition)
    container = j.container(Counter, loop_mode)
    container.steering.pause()
    run = start(running, container)
    steps = container.steering.step(5)
    assert len(steps) == 5 and steps.stopped_early is None
    assert container.processed == 5
    for partition in (0, 1):
        offsets = [int(s.offset) for s in steps if s.ssp.partition == partition]
        assert offsets == list(range(len(offsets))), "each partition in its order, none skipped"
    for step in steps:
        assert step.task == f"Partition {step.ssp.partition}"
        assert "round robin" in step.reason
        assert [o.message for o in step.outputs] == [f"v1:{step.offset}:{step.message}={step.writes[0][3]}"]
        assert len(step.writes) == 1 and step.writes[0][:2] == ("counts", step.message)
    first_a = [s.writes[0] for s in steps if s.ssp.partition == 0 and s.message == "a"]
    assert first_a[:2] == [("counts", "a", None, 1), ("counts", "a", 1, 2)]
    assert container.processed == 5, "paused again after the steps"
    j.end()
    rest = container.steering.step(100)
    assert len(rest) == 5 and rest.stopped_early == "end of stream"
    run.join()
    assert container.processed == 10


def test_a_step_of_an_async_task_waits_for_its_callback_and_captures_what_it_sent(
    tmp_path: Path, running: list[Running]
) -> None:
    class Later:
        def init(self, context: Any) -> None:
            self.store = context.get_store("counts")

        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            await asyncio.sleep(0.001)
            self.store.put_all([(envelope.message, 1), (envelope.message, 2)])
            collector.send(OutgoingMessageEnvelope(OUT, envelope.message))
            self.store.delete(envelope.message)

    j = job(tmp_path, **{"task.max.concurrency": "4"})
    j.send("in", ["p", "q"])
    container = j.container(Later)
    container.steering.pause()
    start(running, container)
    (step,) = container.steering.step()
    assert [o.message for o in step.outputs] == ["p"]
    assert step.writes == (("counts", "p", None, 1), ("counts", "p", 1, 2), ("counts", "p", 2, None))
    assert container.processed == 1


class Clicks:
    """The common idiom: read a dict (or start one), change it, put it back; then change it after the put."""

    def init(self, context: Any) -> None:
        self.store = context.get_store("clicks")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        cur = self.store.get(envelope.message) or {"clicks": 0}
        cur["clicks"] += 1
        self.store.put(envelope.message, cur)
        cur["clicks"] += 100  # after the put: neither the store nor the step sees it


def clicks_job(tmp_path: Path) -> Job:
    """A job with the DuckDB store ``clicks`` (string keys, JSON values)."""
    return job(
        tmp_path,
        **{
            "stores.clicks.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.clicks.key.serde": "string",
            "stores.clicks.msg.serde": "json",
        },
    )


def test_steps_show_each_writes_values_as_they_were(tmp_path: Path, running: list[Running]) -> None:
    j = clicks_job(tmp_path)
    j.send("in", ["a", "a", "a"])
    container = j.container(Clicks)
    container.steering.pause()
    start(running, container)
    steps = container.steering.step(3)
    assert [step.writes for step in steps] == [
        (("clicks", "a", None, {"clicks": 1}),),
        (("clicks", "a", {"clicks": 1}, {"clicks": 2}),),
        (("clicks", "a", {"clicks": 2}, {"clicks": 3}),),
    ]


class BoundWrites:
    """Keeps the store's methods as its own (bound at init, before any step), reads an object, changes it
    and puts it back."""

    def init(self, context: Any) -> None:
        store = context.get_store("clicks")
        self.get, self.put, self.delete = store.get, store.put, store.delete

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        cur = self.get(envelope.message) or {"clicks": 0}
        cur["clicks"] += 1
        self.put(envelope.message, cur)
        if cur["clicks"] == 3:
            self.delete(envelope.message)
        cur["clicks"] += 100  # after the writes: neither the store nor the step sees it


def test_a_step_records_writes_through_methods_bound_before_it_with_old_and_new_as_they_were(
    tmp_path: Path, running: list[Running]
) -> None:
    j = clicks_job(tmp_path)
    j.send("in", ["a", "a", "a"])
    container = j.container(BoundWrites)
    container.steering.pause()
    start(running, container)
    steps = container.steering.step(3)
    assert [step.writes for step in steps] == [
        (("clicks", "a", None, {"clicks": 1}),),
        (("clicks", "a", {"clicks": 1}, {"clicks": 2}),),
        (("clicks", "a", {"clicks": 2}, {"clicks": 3}), ("clicks", "a", {"clicks": 3}, None)),
    ]
    old, new = steps[1].writes[0][2:]
    assert old != new


def test_steps_commit_so_sql_shows_the_state_after_them(tmp_path: Path, running: list[Running]) -> None:
    j = job(tmp_path)
    j.send("in", ["a", "b", "a", "a"])
    container = j.container(Counter)
    container.steering.pause()
    start(running, container)
    query = "SELECT key, value FROM counts ORDER BY key"
    container.steering.step(3)
    counts = asyncio.run(container.query_store("counts", query))
    assert counts.rows == [("a", 2), ("b", 1)], "the steps committed: SQL shows the state after them"
    assert list(j.checkpoint().values()) == ["2"], "the checkpoint holds the last offset stepped"
    container.steering.step()
    assert asyncio.run(container.query_store("counts", query)).rows == [("a", 3), ("b", 1)]


def test_peek_shows_the_next_message_and_why_and_changes_no_order(
    tmp_path: Path, running: list[Running], loop_mode: LoopMode
) -> None:
    j = job(tmp_path, partitions=2)
    for partition in (0, 1):
        j.send("in", [f"p{partition}-{i}" for i in range(3)], partition=partition)
    container = j.container(Counter, loop_mode)
    container.steering.pause()
    run = start(running, container)
    first = container.steering.peek()
    assert first is not None and "round robin" in first.reason
    assert container.steering.peek() == first, "peeking twice shows the same decision"
    assert container.processed == 0, "a peek processes nothing"
    (step,) = container.steering.step()
    assert (step.task, step.ssp, step.offset, step.message, step.reason) == (
        first.task,
        first.ssp,
        first.offset,
        first.message,
        first.reason,
    )
    upcoming = container.steering.peek()
    assert upcoming is not None and (upcoming.ssp, upcoming.offset) != (first.ssp, first.offset)
    container.steering.resume()
    j.end()
    run.join()
    sent = outputs(j)
    assert len(sent) == 6
    assert sent[0].startswith(f"v1:{first.offset}:{first.message}=")
    assert sent[1].startswith(f"v1:{upcoming.offset}:{upcoming.message}="), "the peeked message ran next"


def test_a_peek_of_a_job_paused_before_its_start_waits_for_the_start(
    tmp_path: Path, running: list[Running]
) -> None:
    j = job(tmp_path)
    j.send("in", ["a", "b"])
    container = j.container(Counter)
    container.steering.pause()
    peeked: list[object] = []
    waiting = threading.Thread(target=lambda: peeked.append(container.steering.peek(30)))
    waiting.start()  # before the start: it waits for it, where it said "has not started"
    start(running, container)
    waiting.join(30)
    assert len(peeked) == 1 and peeked[0] is not None, peeked
    assert container.processed == 0
    container.steering.resume()
    j.end()


def test_peek_of_a_drained_job_is_none_and_needs_a_pause(tmp_path: Path, running: list[Running]) -> None:
    j = job(tmp_path)
    container = j.container(Counter)
    with pytest.raises(SamzaError, match="has not started"):
        container.steering.peek()
    start(running, container)
    with pytest.raises(SamzaError, match=r"peek\(\) needs a paused job"):
        container.steering.peek()
    container.steering.pause()
    assert container.steering.peek() is None
    j.send("in", ["x"])
    eventually(lambda: container.steering.peek() is not None, message="the new input reached the chooser")
    next_message = container.steering.peek()
    assert next_message is not None and (next_message.offset, next_message.message) == ("0", "x")


def test_step_needs_a_pause_and_a_started_job(tmp_path: Path, running: list[Running]) -> None:
    j = job(tmp_path)
    container = j.container(Counter)
    with pytest.raises(SamzaError, match="has not started"):
        container.steering.step()
    start(running, container)
    with pytest.raises(SamzaError, match="pause"):
        container.steering.step()


def test_a_step_that_times_out_returns_what_it_took(tmp_path: Path, running: list[Running]) -> None:
    j = job(tmp_path)
    j.send("in", ["a"])
    container = j.container(Counter)
    container.steering.pause()
    start(running, container)
    steps = container.steering.step(3, timeout=0.2)  # one message, then none comes: the step gives up
    assert len(steps) == 1 and steps.stopped_early == "timeout"


# -- live knobs ---------------------------------------------------------------------------------------------
def test_raising_concurrency_live_speeds_an_awaiting_task_up(tmp_path: Path, running: list[Running]) -> None:
    finished: list[float] = []

    class Awaiting:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            await asyncio.sleep(0.01)
            finished.append(time.perf_counter())

    j = Job({"in": 1})
    container = j.container(Awaiting)
    j.send("in", list(range(3000)))
    start(running, container)
    eventually(lambda: len(finished) >= 25)
    assert container.steering.set({"task.max.concurrency": 40})["task.max.concurrency"] == "40"
    switched = len(finished)
    eventually(lambda: len(finished) >= switched + 800)
    before = (25 - 5) / (finished[24] - finished[4])
    after = 700 / (finished[switched + 799] - finished[switched + 99])
    assert after >= 5 * before, f"{before:.0f} msg/s at concurrency 1, {after:.0f} msg/s at 40"


# Sync calls on a thread pool above concurrency 1 run in parallel: there is no order to keep there.
@pytest.mark.parametrize("loop_mode", [m for m in LOOP_MODES if not m.thread_pool_size], ids=str)
def test_concurrency_back_and_forth_keeps_a_sync_task_exact(
    tmp_path: Path, running: list[Running], loop_mode: LoopMode
) -> None:
    j = job(tmp_path)
    container = j.container(Counter, loop_mode)
    run = start(running, container)
    for concurrency in (5, 1, 3, 1):
        j.send("in", ["a"] * 100)
        container.steering.set(task_max_concurrency=concurrency)
    j.end()
    run.join()
    counts = [int(value.rsplit("=", 1)[1]) for value in outputs(j)]
    assert counts == list(range(1, 401)), "each message once, in order"


def test_set_refuses_other_keys_listing_the_live_ones_and_bad_values_naming_them(
    tmp_path: Path, running: list[Running]
) -> None:
    j = job(tmp_path)
    container = j.container(Counter)
    start(running, container)
    live = r"task\.class cannot change.*task\.max\.concurrency.*samza\.priority"
    with pytest.raises(ConfigError, match=live):
        container.steering.set({"task.class": "x.Y"})
    with pytest.raises(ConfigError, match=r"task\.max\.concurrency.*'zero'"):
        container.steering.set({"task.max.concurrency": "zero"})
    with pytest.raises(ConfigError, match=r"task\.consumer\.batch\.size.*started with batching"):
        container.steering.set({"task.consumer.batch.size": 4})
    with pytest.raises(ConfigError, match="started with stream priorities"):
        container.steering.set({"systems.test.streams.in.samza.priority": 2})
    values = container.steering.set({"task.commit.ms": 50, "task.window.ms": "1000"})
    assert values["task.commit.ms"] == "50" and values["task.window.ms"] == "1000"


def test_priorities_and_batch_size_change_live(tmp_path: Path, running: list[Running]) -> None:
    j = Job(
        {"low": 1, "high": 1},
        **{
            "systems.test.streams.low.samza.priority": "0",
            "systems.test.streams.high.samza.priority": "0",
            "task.consumer.batch.size": "2",
        },
    )
    for stream in ("low", "high"):
        j.send(stream, [f"{stream}{i}" for i in range(6)])
    container = j.container(Echo)
    container.steering.pause()
    start(running, container)
    values = container.steering.set(
        {"systems.test.streams.high.samza.priority": 5, "task.consumer.batch.size": 1}
    )
    assert values["systems.test.streams.high.samza.priority"] == "5"
    assert values["task.consumer.batch.size"] == "1"
    steps = container.steering.step(6)
    streams = [step.ssp.stream for step in steps]
    # Each partition's one envelope already held keeps its old tier; then "high" goes first.
    assert streams[2:] == ["high"] * 4, streams
    assert any("priority tier 5" in step.reason for step in steps)


def test_the_values_before_the_start_list_every_inputs_tier_as_the_running_chooser_does(
    tmp_path: Path, running: list[Running]
) -> None:
    j = Job({"low": 1, "high": 1}, **{"systems.test.streams.high.samza.priority": "2"})
    j.send("low", ["l"])
    container = j.container(Echo)
    container.steering.pause()
    before = container.steering.set({})
    tiers = {key: value for key, value in before.items() if key.endswith(".samza.priority")}
    assert tiers == {
        "systems.test.streams.high.samza.priority": "2",
        "systems.test.streams.low.samza.priority": "0",
    }, "a stream without a priority of its own is in tier 0, as the chooser will put it"
    start(running, container)  # (returns once the container runs)
    after = container.steering.set({})
    assert {key: after[key] for key in tiers} == tiers


# -- hot swap -----------------------------------------------------------------------------------------------
def test_swap_keeps_the_store_and_processes_each_message_once_old_then_new(
    tmp_path: Path, running: list[Running], loop_mode: LoopMode
) -> None:
    j = job(tmp_path)
    container = j.container(Counter, loop_mode)
    run = start(running, container)
    j.send("in", [f"k{i % 4}" for i in range(200)])
    eventually(lambda: container.processed >= 40)
    container.steering.swap(CounterV2)
    j.send("in", [f"k{i % 4}" for i in range(200, 400)])
    j.end()
    run.join()
    seen = [value.split(":") for value in outputs(j)]
    versions = [version for version, _, _ in seen]
    assert sorted(int(offset) for _, offset, _ in seen) == list(range(400)), "each message exactly once"
    swapped_at = versions.index("v2")
    assert versions == ["v1"] * swapped_at + ["v2"] * (400 - swapped_at), "old code before, new after"
    assert 40 <= swapped_at <= 200
    counts = asyncio.run(container.query_store("counts", "SELECT key, value FROM counts ORDER BY key"))
    assert counts.rows == [(f"k{i}", 100) for i in range(4)], "the new code counted on from the old counts"


def test_a_swap_whose_init_fails_changes_nothing_and_names_the_task_and_line(
    tmp_path: Path, running: list[Running]
) -> None:
    j = job(tmp_path, partitions=2)
    container = j.container(Counter)
    run = start(running, container)
    j.send("in", ["a"] * 10)
    eventually(lambda: container.processed == 10)
    with pytest.raises(SamzaError) as refused:
        container.steering.swap(BrokenInit)
    message = str(refused.value)
    assert "Partition 0" in message and "init()" in message and "no database today" in message
    assert f"{Path(__file__).name}:" in message and 'raise ValueError("no database today")' in message
    j.send("in", ["a"] * 10, partition=1)
    j.end()
    run.join()
    assert all(value.startswith("v1:") for value in outputs(j)), "the old code goes on"
    assert container.processed == 20


def test_a_swap_while_paused_stays_paused_and_one_before_the_start_replaces_the_task(
    tmp_path: Path, running: list[Running]
) -> None:
    j = job(tmp_path)
    j.send("in", ["a", "b", "c"])
    container = j.container(Counter)
    container.steering.swap(CounterV2)  # before the start: the task the job will run
    container.steering.pause()
    start(running, container)
    (first,) = container.steering.step()
    container.steering.swap(Counter)
    assert container.processed == 1, "still paused after the swap"
    (second,) = container.steering.step()
    assert first.outputs[0].message.startswith("v2:") and second.outputs[0].message.startswith("v1:")


def test_the_methods_after_the_end_say_the_job_ended(tmp_path: Path) -> None:
    j = job(tmp_path)
    j.send("in", ["a"])
    j.end()
    container = j.run(Counter)
    assert not container.steering.paused
    for call in (
        container.steering.pause,
        container.steering.resume,
        container.steering.step,
        lambda: container.steering.swap(CounterV2),
    ):
        with pytest.raises(SamzaError, match="has ended"):
            call()
