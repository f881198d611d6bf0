"""The run loop's rules (docs/architecture.md §3, rules 1-9), with the scenarios of Samza's TestRunLoop."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from typing import Any

import pytest

from samza_nb import (
    OutgoingMessageEnvelope,
    RequestScope,
    SamzaError,
    TaskFailedError,
)
from samza_nb.errors import CallbackError
from samza_nb.observe.events import Committed, EndOfStreamReached, ProcessStarted, WindowFired
from samza_nb.testing import FakeClock, LoopMode, TestRunner
from tests.unit.container.harness import OUT, Job


class Recorder:
    """A sync task that records (task name, offset) of every message, shared by all tasks."""

    log: list[tuple[str, str]]

    def __init__(self, log: list[Any], name: list[str]) -> None:
        self.log = log
        self.name = name

    def init(self, context: Any) -> None:
        self.task_name = context.task_name

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.log.append((self.task_name, envelope.offset, envelope.message))


def recorder_factory(log: list[Any]) -> Any:
    return lambda: Recorder(log, [])


# -- rule 1: order and concurrency ------------------------------------------------------------------------
def test_messages_of_several_tasks_are_all_processed_and_checkpointed(loop_mode: LoopMode) -> None:
    log: list[Any] = []
    result = (
        TestRunner.of(recorder_factory(log), mode=loop_mode).add_input("in", {0: ["a", "b"], 1: ["c"]}).run()
    )
    assert sorted(log) == [("Partition 0", "0", "a"), ("Partition 0", "1", "b"), ("Partition 1", "0", "c")]
    assert {task: {str(s): o for s, o in cp.items()} for task, cp in result.checkpoints.items()} == {
        "Partition 0": {"test.in#0": "1"},
        "Partition 1": {"test.in#1": "0"},
    }


def test_a_task_processes_its_partition_in_offset_order(loop_mode: LoopMode) -> None:
    log: list[Any] = []
    TestRunner.of(recorder_factory(log), mode=loop_mode).add_input("in", list(range(50))).run()
    assert [offset for _, offset, _ in log] == [str(i) for i in range(50)]


class HoldingTask:
    """An AsyncStreamTask that keeps callbacks; a helper thread completes them in a chosen order."""

    def __init__(self, shared: dict[str, Any]) -> None:
        self.shared = shared

    def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
        shared = self.shared
        with shared["lock"]:
            shared["calls"].append(envelope.offset)
            shared["in_flight"] += 1
            shared["max_in_flight"] = max(shared["max_in_flight"], shared["in_flight"])
            shared["held"].append((envelope, callback))
        shared["arrived"].set()


def holding_shared() -> dict[str, Any]:
    return {
        "lock": threading.Lock(),
        "calls": [],
        "in_flight": 0,
        "max_in_flight": 0,
        "held": [],
        "arrived": threading.Event(),
    }


def release_all_in_batches(shared: dict[str, Any], stop: threading.Event) -> None:
    """Complete held callbacks newest first, once a batch has arrived (exercises out-of-order)."""
    while not stop.is_set():
        shared["arrived"].wait(0.01)
        time.sleep(0.002)
        with shared["lock"]:
            shared["arrived"].clear()
            batch = list(reversed(shared["held"]))
            shared["held"].clear()
            shared["in_flight"] -= len(batch)
        for _, callback in batch:
            callback.complete()


@pytest.mark.parametrize("concurrency", [1, 3])
def test_at_most_max_concurrency_messages_are_in_flight_and_calls_keep_chooser_order(
    concurrency: int,
) -> None:
    shared = holding_shared()
    stop = threading.Event()
    helper = threading.Thread(target=release_all_in_batches, args=(shared, stop), daemon=True)
    helper.start()
    try:
        result = (
            TestRunner.of(lambda: HoldingTask(shared))
            .add_input("in", list(range(30)))
            .add_config({"task.max.concurrency": str(concurrency)})
            .run(timeout=20)
        )
    finally:
        stop.set()
        helper.join()
    assert shared["calls"] == [str(i) for i in range(30)]
    assert shared["max_in_flight"] == concurrency
    assert {str(s): o for s, o in result.checkpoints["Partition 0"].items()} == {"test.in#0": "29"}


def test_with_concurrency_one_a_completion_happens_before_the_next_call() -> None:
    events: list[str] = []

    class LateCompleter:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            events.append(f"process {envelope.offset}")

            def finish() -> None:
                time.sleep(0.005)
                events.append(f"complete {envelope.offset}")
                callback.complete()

            threading.Thread(target=finish).start()

    TestRunner.of(LateCompleter).add_input("in", list(range(5))).run()
    expected = [item for i in range(5) for item in (f"process {i}", f"complete {i}")]
    assert events == expected


def test_coroutine_tasks_overlap_up_to_max_concurrency() -> None:
    state = {"now": 0, "max": 0}

    class Sleeper:
        async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
            await asyncio.sleep(0.01)
            state["now"] -= 1
            collector.send(OutgoingMessageEnvelope(OUT, envelope.message))

    result = (
        TestRunner.of(Sleeper)
        .add_input("in", list(range(40)))
        .add_output("out")
        .add_config({"task.max.concurrency": "8"})
        .run()
    )
    assert state["max"] == 8
    assert sorted(result.output("out")[0]) == list(range(40))
    assert result.processed == 40  # parked messages started later count too


# -- rule 2: commit, window, end-of-stream and process never overlap ---------------------------------------
def test_window_and_commit_run_only_when_nothing_is_in_flight() -> None:
    shared = holding_shared()
    violations: list[str] = []

    class Windowed(HoldingTask):
        def window(self, collector: Any, coordinator: Any) -> None:
            with shared["lock"]:
                if shared["in_flight"]:
                    violations.append(f"window with {shared['in_flight']} in flight")

    stop = threading.Event()
    helper = threading.Thread(target=release_all_in_batches, args=(shared, stop), daemon=True)
    helper.start()
    job = Job(task__max__concurrency="4", task__window__ms="1", task__commit__ms="2")
    job.send("in", list(range(300)))
    job.end()
    try:
        job.run(lambda: Windowed(shared))
    finally:
        stop.set()
        helper.join()
    assert violations == []
    assert any(isinstance(e, WindowFired) for e in job.events)
    # Every commit saw a contiguous prefix: offsets never jump past an unfinished message.
    assert job.checkpoint() == {"test.in#0": "299"}


def test_due_commit_runs_before_due_window_and_both_interrupt_processing() -> None:
    clock = FakeClock()
    order: list[str] = []

    class Task:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            order.append(envelope.offset)
            if envelope.offset == "0":
                clock.advance(150)  # both timers are due before message 1

        def window(self, collector: Any, coordinator: Any) -> None:
            order.append("window")

    job = Job(task__window__ms="100", task__commit__ms="100")
    job.send("in", list(range(5000)))
    job.end()
    container = job.container(Task, clock=clock)
    container.bus.subscribe(lambda e: order.append("commit") if isinstance(e, Committed) else None)
    asyncio.run(asyncio.wait_for(container.run(), 10))
    # Timers are looked at between slices of messages (Samza's timers are asynchronous too): the due
    # commit runs first, then the window, both long before the input is exhausted.
    commit, window = order.index("commit"), order.index("window")
    assert commit < window < order.index("4999")
    assert window == commit + 1


# -- rule 3: timers --------------------------------------------------------------------------------------
class WindowCounter:
    def __init__(self, clock: FakeClock, stop_after: int, work_ms: float = 0.0) -> None:
        self.clock = clock
        self.stop_after = stop_after
        self.work_ms = work_ms
        self.times: list[float] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass

    def window(self, collector: Any, coordinator: Any) -> None:
        self.times.append(self.clock.now_ms())
        if self.work_ms:
            self.clock.advance(self.work_ms)
        if len(self.times) == self.stop_after:
            coordinator.shutdown(RequestScope.CURRENT_TASK)


def test_window_fires_at_a_fixed_rate_from_one_period_after_start() -> None:
    clock = FakeClock(start_ms=1000)
    task = WindowCounter(clock, stop_after=4)
    job = Job(task__window__ms="100")
    job.run(task, clock=clock)
    assert task.times == [1100, 1200, 1300, 1400]


def test_window_ticks_collapse_when_a_window_is_slow() -> None:
    clock = FakeClock()
    task = WindowCounter(clock, stop_after=4, work_ms=350)
    Job(task__window__ms="100").run(task, clock=clock)
    # 200, 300 and 400 were missed while the first window ran: one call at 450, not three; and so on.
    assert task.times == [100, 450, 800, 1150]


def test_no_window_unless_the_task_is_windowable_and_window_ms_is_positive() -> None:
    calls: list[float] = []

    class Task:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            pass

        def window(self, collector: Any, coordinator: Any) -> None:
            calls.append(1)

    TestRunner.of(Task).add_input("in", [1, 2]).with_clock(FakeClock()).run()
    assert calls == []


def test_commit_timer_commits_every_period() -> None:
    clock = FakeClock()
    task = WindowCounter(clock, stop_after=5)
    job = Job(task__window__ms="100", task__commit__ms="200")
    job.send("in", ["a"])
    job.run(task, clock=clock)
    commit_times = [e.at_ms for e in job.events if isinstance(e, Committed)]
    # Timer commits at 200 and 400; the last is the final commit at shutdown (offsets unchanged → skipped).
    assert commit_times[:2] == [200, 400]
    assert job.checkpoint() == {"test.in#0": "0"}


# -- rule 4: low watermark -------------------------------------------------------------------------------
def test_a_checkpoint_never_covers_an_unfinished_message() -> None:
    """Messages 1 and 2 finish while 0 is in flight; an async commit then may not checkpoint 1 or 2."""
    first_commit = threading.Event()
    held: list[Any] = []

    class Task:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            if envelope.offset == "0":
                held.append(callback)

                def finish() -> None:
                    first_commit.wait(5)
                    callback.complete()

                threading.Thread(target=finish).start()
            else:
                callback.complete()

    job = Job(task__max__concurrency="3", task__async__commit="true", task__commit__ms="1000")
    job.send("in", ["a", "b", "c"])
    job.end()
    container = job.container(Task, clock=FakeClock())
    container.bus.subscribe(lambda e: first_commit.set() if isinstance(e, Committed) else None)
    asyncio.run(asyncio.wait_for(container.run(), 10))
    commits = job.commits()
    assert commits[0] == {}  # timer commit while 0 was in flight: nothing is safe to checkpoint yet
    assert commits[-1] == {"test.in#0": "2"}


def test_out_of_order_completion_with_a_commit_request_checkpoints_only_the_released_prefix() -> None:
    """Samza's testProcessCallbacksCompletedOutOfOrder: 1 completes first; 0 completes with commit and
    shutdown requests; the commit covers offset 0 only."""
    gate = threading.Event()

    class Task:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            if envelope.offset == "0":

                def finish() -> None:
                    gate.wait(5)
                    coordinator.commit(RequestScope.CURRENT_TASK)
                    coordinator.shutdown(RequestScope.CURRENT_TASK)
                    callback.complete()

                threading.Thread(target=finish).start()
            else:
                callback.complete()
                gate.set()

    job = Job(task__max__concurrency="2")
    job.send("in", ["a", "b"])
    job.run(Task)
    assert job.commits()[0] == {"test.in#0": "0"}
    # After that commit, message 1 is released; the stop commits it.
    assert job.checkpoint() == {"test.in#0": "1"}


# -- rule 5: commit and shutdown requests ------------------------------------------------------------------
class Requesting:
    def __init__(self, commit: RequestScope | None, shutdown: RequestScope | None) -> None:
        self.commit = commit
        self.shutdown = shutdown

    def init(self, context: Any) -> None:
        self.name = context.task_name

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if self.name == "Partition 0":
            if self.commit:
                coordinator.commit(self.commit)
            if self.shutdown:
                coordinator.shutdown(self.shutdown)


def two_partition_job(**config: Any) -> Job:
    job = Job({"in": 2}, **config)
    job.send("in", ["a0", "b0"], partition=0)
    job.send("in", ["a1", "b1"], partition=1)
    return job


def test_commit_current_task_commits_only_that_task_before_shutdown(loop_mode: LoopMode) -> None:
    job = two_partition_job()
    job.run(
        lambda: Requesting(RequestScope.CURRENT_TASK, RequestScope.ALL_TASKS_IN_CONTAINER), mode=loop_mode
    )
    assert job.committed_tasks() == ["Partition 0"]
    assert job.checkpoint("Partition 0") == {"test.in#0": "0"}


def test_commit_all_tasks_commits_every_task(loop_mode: LoopMode) -> None:
    job = two_partition_job()
    job.run(
        lambda: Requesting(RequestScope.ALL_TASKS_IN_CONTAINER, RequestScope.ALL_TASKS_IN_CONTAINER),
        mode=loop_mode,
    )
    assert sorted(job.committed_tasks()) == ["Partition 0", "Partition 1"]


def test_shutdown_current_task_is_a_vote_and_the_container_stops_when_all_voted() -> None:
    class Voter:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            coordinator.shutdown(RequestScope.CURRENT_TASK)

    job = two_partition_job()
    container = job.run(Voter)
    assert container.processed == 2  # one message each, then both had voted


def test_one_vote_does_not_stop_the_container(loop_mode: LoopMode) -> None:
    job = two_partition_job()
    job.end()
    container = job.run(lambda: Requesting(None, RequestScope.CURRENT_TASK), mode=loop_mode)
    assert container.processed == 4
    assert job.checkpoint("Partition 1") == {"test.in#1": "1"}


# -- rule 6: failures ------------------------------------------------------------------------------------
def test_a_failed_callback_fails_the_container_naming_task_ssp_and_offset() -> None:
    class Failing:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            if envelope.offset == "2":
                callback.failure(RuntimeError("Intentional failure"))
            else:
                callback.complete()

    with pytest.raises(TaskFailedError) as info:
        TestRunner.of(Failing).add_input("in", list(range(5))).run()
    error = info.value
    assert error.task_name == "Partition 0"
    assert str(error.ssp) == "test.in#0" and error.offset == "2"
    assert "Partition 0" in str(error) and "test.in#0" in str(error) and "offset 2" in str(error)
    assert isinstance(error.__cause__, RuntimeError)


def test_an_exception_from_process_fails_the_container_and_its_offset_is_never_checkpointed(
    loop_mode: LoopMode,
) -> None:
    class Exploding:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "3":
                raise ValueError("bad message")
            if envelope.offset == "1":
                coordinator.commit(RequestScope.CURRENT_TASK)

    job = Job()
    job.send("in", list(range(6)))
    job.end()
    with pytest.raises(TaskFailedError, match="offset 3"):
        job.run(Exploding, mode=loop_mode)
    assert job.checkpoint() == {"test.in#0": "1"}


def test_a_restart_after_a_failure_resumes_from_the_last_checkpoint() -> None:
    seen: list[str] = []
    fail = {"on": True}

    class Flaky:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            if envelope.offset == "3" and fail["on"]:
                raise ValueError("transient")
            seen.append(envelope.offset)
            coordinator.commit(RequestScope.CURRENT_TASK)

    job = Job()
    job.send("in", list(range(6)))
    job.end()
    with pytest.raises(TaskFailedError):
        job.run(Flaky)
    fail["on"] = False
    job.run(Flaky)
    assert seen == ["0", "1", "2", "3", "4", "5"]  # nothing lost, nothing repeated (each commit was before)


def test_an_exception_from_window_fails_the_container() -> None:
    class BadWindow:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            pass

        def window(self, collector: Any, coordinator: Any) -> None:
            raise KeyError("oops")

    with pytest.raises(TaskFailedError, match="window"):
        Job(task__window__ms="10").run(BadWindow, clock=FakeClock())


def test_completing_a_callback_twice_fails_the_container() -> None:
    class Twice:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            callback.complete()
            callback.complete()

    with pytest.raises(TaskFailedError) as info:
        TestRunner.of(Twice).add_input("in", [1]).run()
    assert isinstance(info.value.__cause__, CallbackError)


def test_a_callback_that_times_out_fails_the_container() -> None:
    class Forgetful:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            pass  # never completes

    runner = (
        TestRunner.of(Forgetful)
        .add_input("in", [1])
        .add_config({"task.callback.timeout.ms": "50"})
        .with_clock(FakeClock())
    )
    with pytest.raises(TaskFailedError, match="timed out after 50 ms"):
        runner.run()


def test_a_late_completion_after_a_timeout_does_not_hide_the_timeout() -> None:
    holder: list[Any] = []

    class Late:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            holder.append(callback)

    with pytest.raises(TaskFailedError, match="timed out"):
        TestRunner.of(Late).add_input("in", [1]).add_config({"task.callback.timeout.ms": "20"}).run()
    holder[0].complete()  # too late: reported to a stopped loop, no crash


# -- rule 7: thread pool ---------------------------------------------------------------------------------
def test_with_a_thread_pool_sync_tasks_progress_in_parallel() -> None:
    barrier = threading.Barrier(2, timeout=5)
    threads: set[str] = set()

    class Meeting:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            threads.add(threading.current_thread().name)
            barrier.wait()  # both tasks must be inside process at once, or this breaks

    result = (
        TestRunner.of(Meeting)
        .add_input("in", {0: ["a"], 1: ["b"]})
        .add_config({"job.container.thread.pool.size": "2"})
        .run()
    )
    assert result.processed == 2
    assert all(name.startswith("samza-task") for name in threads)


def test_without_a_thread_pool_sync_tasks_run_on_the_loop_thread() -> None:
    names: set[str] = set()

    class Where:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            names.add(threading.current_thread().name)

    TestRunner.of(Where).add_input("in", [1, 2, 3]).run()
    assert len(names) == 1 and not next(iter(names)).startswith("samza-task")


# -- rule 8: no busy spin, back-pressure -----------------------------------------------------------------
def _cpu_by_thread(excluded: set[int | None]) -> dict[int, float]:
    """CPU seconds used so far by each live thread of this process not in ``excluded`` (by ident)."""
    used: dict[int, float] = {}
    for thread in threading.enumerate():
        if thread.ident is None or thread.ident in excluded:
            continue
        with contextlib.suppress(OSError):  # ended meanwhile
            used[thread.ident] = time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return used


def test_an_idle_job_sleeps() -> None:
    """CPU of the job's own threads (the loop thread and any it started), not of the process: other tests'
    threads still winding down in this process would count otherwise."""
    job = Job()
    container = job.container(Recorder([], []))
    others = {t.ident for t in threading.enumerate()} - {threading.get_ident()}

    async def idle() -> float:
        runner = asyncio.ensure_future(container.run())
        await asyncio.sleep(0.2)
        before = _cpu_by_thread(others)
        await asyncio.sleep(1.0)
        after = _cpu_by_thread(others)  # a thread started meanwhile counts from 0
        used = sum(cpu - before.get(ident, 0.0) for ident, cpu in after.items())
        container.shutdown()
        await runner
        return used

    used = asyncio.run(idle())
    assert used < 0.15, f"an idle job used {used:.3f} s of CPU in 1 s"


def test_a_slow_task_does_not_hold_back_another_task() -> None:
    """Task 0 holds its callbacks; task 1 still processes all of its messages."""
    held: list[Any] = []
    done: list[str] = []

    class Task:
        def init(self, context: Any) -> None:
            self.name = context.task_name

        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            if self.name == "Partition 0":
                held.append(callback)
            else:
                done.append(envelope.offset)
                callback.complete()
                if len(done) == 50:
                    coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)

    job = Job({"in": 2}, task__shutdown__ms="50")
    job.send("in", list(range(50)), partition=0)
    job.send("in", list(range(50)), partition=1)
    job.run(Task)
    assert len(done) == 50
    assert len(held) == 1  # concurrency 1: task 0 got one message and waits
    assert job.checkpoint("Partition 0") == {}


# -- rule 9: end-of-stream -------------------------------------------------------------------------------
def test_end_of_stream_runs_once_per_task_after_all_its_partitions_ended_then_commits(
    loop_mode: LoopMode,
) -> None:
    order: list[str] = []

    class Listener:
        def init(self, context: Any) -> None:
            self.name = context.task_name

        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            order.append(f"{self.name} {envelope.ssp.stream}:{envelope.offset}")

        def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
            order.append(f"{self.name} eos")

    job = Job({"a": 2, "b": 2})
    for stream in ("a", "b"):
        for p in (0, 1):
            job.send(stream, ["x"], partition=p)
    job.end()
    job.run(Listener, mode=loop_mode)
    for task in ("Partition 0", "Partition 1"):
        mine = [o for o in order if o.startswith(task)]
        assert mine[-1] == f"{task} eos" and mine.count(f"{task} eos") == 1
        assert len(mine) == 3
        assert job.checkpoint(task) == {f"test.a#{task[-1]}": "0", f"test.b#{task[-1]}": "0"}
    ends = [e for e in job.events if isinstance(e, EndOfStreamReached) and e.task_done]
    commits = [e for e in job.events if isinstance(e, Committed)]
    assert len(ends) == 2 and len(commits) == 2
    assert all(job.events.index(c) > job.events.index(e) for c, e in zip(commits, ends, strict=False))


def test_end_of_stream_waits_for_in_flight_messages() -> None:
    state: dict[str, Any] = {"in_flight": 0, "seen_at_eos": None}

    class Task:
        def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
            state["in_flight"] += 1

            def finish() -> None:
                time.sleep(0.05 if envelope.offset == "0" else 0.0)
                state["in_flight"] -= 1
                callback.complete()

            threading.Thread(target=finish).start()

        def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
            state["seen_at_eos"] = state["in_flight"]

    TestRunner.of(Task).add_input("in", ["a", "b"]).add_config({"task.max.concurrency": "2"}).run()
    assert state["seen_at_eos"] == 0


def test_end_of_stream_is_never_checkpointed(loop_mode: LoopMode) -> None:
    result = TestRunner.of(Recorder([], []), mode=loop_mode).add_input("in", ["a", "b", "c"]).run()
    assert {str(s): o for s, o in result.checkpoints["Partition 0"].items()} == {"test.in#0": "2"}


def test_a_task_with_an_empty_bounded_input_ends_at_once() -> None:
    ended: list[bool] = []

    class Task:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            raise AssertionError("no message expected")

        def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
            ended.append(True)

    TestRunner.of(Task).add_input("in", []).run()
    assert ended == [True]


def test_end_of_stream_output_is_flushed_before_the_final_checkpoint() -> None:
    class Summing:
        def __init__(self) -> None:
            self.total = 0

        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            self.total += envelope.message

        def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
            collector.send(OutgoingMessageEnvelope(OUT, self.total))

    result = TestRunner.of(Summing).add_input("in", [1, 2, 3]).add_output("out").run()
    assert result.output("out") == {0: [6]}


# -- rule 10: starting offsets skip older messages ----------------------------------------------------------
def test_a_task_skips_messages_older_than_its_starting_offset() -> None:
    from samza_nb.systems.inmemory.system import InMemorySystemConsumer

    original = InMemorySystemConsumer.register

    def rewinding(self: Any, ssp: Any, offset: str) -> None:
        original(self, ssp, "0")  # a consumer that delivers from the start regardless

    log: list[Any] = []
    job = Job()
    job.send("in", list(range(5)))
    job.end()
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.checkpoint import Checkpoint

    job.checkpoints.checkpoints["Partition 0"] = Checkpoint({SystemStreamPartition("test", "in", 0): "2"})
    InMemorySystemConsumer.register = rewinding  # type: ignore[method-assign]
    try:
        job.run(recorder_factory(log))
    finally:
        InMemorySystemConsumer.register = original  # type: ignore[method-assign]
    assert [offset for _, offset, _ in log] == ["3", "4"]


# -- observation ---------------------------------------------------------------------------------------
def test_process_events_report_in_flight_counts() -> None:
    events: list[Any] = []
    TestRunner.of(Recorder([], [])).add_input("in", [1, 2]).subscribe(events.append).run()
    started = [e for e in events if isinstance(e, ProcessStarted)]
    assert [e.offset for e in started] == ["0", "1"] and all(e.in_flight == 1 for e in started)


def test_unknown_output_system_fails_with_a_clear_error() -> None:
    from samza_nb import SystemStream

    class Sender:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            collector.send(OutgoingMessageEnvelope(SystemStream("nowhere", "out"), 1))

    with pytest.raises(SamzaError, match=r"systems\.nowhere\.samza\.factory"):
        TestRunner.of(Sender).add_input("in", [1]).run()


def test_with_a_thread_pool_window_runs_on_the_pool_and_its_failure_fails_the_container() -> None:
    threads: list[str] = []

    class PooledWindow:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            pass

        def window(self, collector: Any, coordinator: Any) -> None:
            threads.append(threading.current_thread().name)
            if len(threads) == 2:
                raise RuntimeError("window broke")

    job = Job(task__window__ms="10", job__container__thread__pool__size="2")
    with pytest.raises(TaskFailedError, match="window broke"):
        job.run(PooledWindow, clock=FakeClock())
    assert len(threads) == 2 and all(name.startswith("samza-task") for name in threads)
