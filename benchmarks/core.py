"""Core container throughput, each figure a ratio to a baseline measured in the same run.

(a) sync pass-through task, concurrency 1, round robin over 1 and over 8 partitions, against a bare
    Python loop calling process() on the same envelopes in the order the container processes them
    (round robin: one envelope of each partition in turn);
(b) the same with a task computing ``envelope.message["v"] * 2`` on dict messages, against a bare loop
    doing the same;
(c) ``async def`` task awaiting a 5 ms call, concurrency 100, against the ideal overlap (100 x the
    sequential rate measured here);
(e) the output path: a map + filter task sending every even result with ``collector.send`` to the
    in-memory system, against a bare loop appending the same results to a list; and the same task sending
    with ``collector.send_to(stream, value)`` (no envelope built);
(f) the observe bus: pass-through with one (empty) subscriber of every event, against none;
(g) the same with a subscriber of commits and windows only;
(i) the loop thread's CPU per message of (c) (``time.thread_time`` over the run, start-up included: the
    loop runs on the calling thread), against ``create_task`` of the same awaiting coroutine, 100 at a
    time, on the same event loop (what asyncio costs);
(h) an ``async def`` pass-through that completes without suspending, concurrency 100, against the same
    task as a sync one (both through TestRunner).

The input is built before the clock starts and then frozen out of the garbage collector
(``gc.freeze``): a job reading from a real system does not hold millions of input objects, so its
collections do not walk them (``--no-freeze`` measures without).

Every run checks that the container processed every message; (e) also that it sent exactly what the bare
loop computed (benchmarks/output_check.py: a mismatch raises, naming it).

Run: ``python benchmarks/core.py [--messages N] [--runs R]``; prints medians of R runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import chain
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb import OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.container import event_loop
from samza_nb.observe import Committed, WindowFired
from samza_nb.testing import TestRunner

OUT = SystemStream("test", "out")
FREEZE = True


class PassThrough:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class Double:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        envelope.message["v"] * 2


class MapFilter:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        value = envelope.message["v"] * 3
        if value % 2 == 0:
            collector.send(OutgoingMessageEnvelope(OUT, value))


class MapFilterTo:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        value = envelope.message["v"] * 3
        if value % 2 == 0:
            collector.send_to(OUT, value)


class AsyncPassThrough:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class RemoteCall:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        await asyncio.sleep(0.005)


@contextmanager
def frozen_input() -> Iterator[None]:
    """Collect, then keep what exists now (the prepared input) out of later collections."""
    gc.collect()
    if FREEZE:
        gc.freeze()
    try:
        yield
    finally:
        if FREEZE:
            gc.unfreeze()


def timed_run(runner: TestRunner, messages: int) -> float:
    return run_checked(runner, messages)[0]


def run_checked(runner: TestRunner, messages: int) -> tuple[float, Any]:
    """(the run's rate, its result), the run checked to have processed ``messages``."""
    start = time.perf_counter()
    result = runner.run(timeout=600)
    elapsed = time.perf_counter() - start
    same("messages processed", result.processed, messages)
    return messages / elapsed, result


def runner_for(task: type, messages: int, partitions: int, dicts: bool) -> tuple[TestRunner, list[Any]]:
    """A runner over ``partitions`` partitions of ``messages`` in all, and its envelopes in round-robin
    order (the order the container processes them in)."""
    per = messages // partitions

    def values() -> list[Any]:
        return [{"v": i} for i in range(per)] if dicts else list(range(per))

    runner = TestRunner.of(task).add_input("in", {p: values() for p in range(partitions)})
    by_partition = [
        runner.broker.envelopes(SystemStreamPartition("test", "in", p), 0)[0] for p in range(partitions)
    ]
    return runner, list(chain.from_iterable(zip(*by_partition, strict=True)))


def compare(task: type, messages: int, partitions: int = 1, dicts: bool = False) -> tuple[float, float]:
    """(bare loop rate, container rate) for a task that sends nothing."""
    runner, envelopes = runner_for(task, messages, partitions, dicts)
    process = task().process
    with frozen_input():
        start = time.perf_counter()
        for envelope in envelopes:
            process(envelope, None, None)
        bare = len(envelopes) / (time.perf_counter() - start)
        return bare, timed_run(runner, len(envelopes))


def compare_output(messages: int, partitions: int = 1, task: type = MapFilter) -> tuple[float, float]:
    """(bare loop rate, container rate) for the map + filter task sending to the in-memory system."""
    runner, envelopes = runner_for(task, messages, partitions, dicts=True)
    runner.add_output("out")
    results: list[int] = []
    append = results.append
    with frozen_input():
        start = time.perf_counter()
        for envelope in envelopes:
            value = envelope.message["v"] * 3
            if value % 2 == 0:
                append(value)
        bare = len(envelopes) / (time.perf_counter() - start)
        rate, result = run_checked(runner, len(envelopes))
    # What the task sent is what the bare loop computed: in its order (the container's round robin) when
    # the output has one partition, as a multiset otherwise.
    sent = result.output("out")
    values = [value for partition in sorted(sent) for value in sent[partition]]
    if len(sent) > 1:
        values, results = sorted(values), sorted(results)
    same(f"(e) {task.__name__}, {partitions} partition(s): the values sent", values, results)
    return bare, rate


def observed(messages: int, events: list[type] | None) -> tuple[float, float]:
    """(container rate without a subscriber, with one)."""
    rates = []
    for subscribe in (False, True):
        runner, envelopes = runner_for(PassThrough, messages, 1, dicts=False)
        if subscribe:
            runner.subscribe(lambda event: None, events=events)
        with frozen_input():
            rates.append(timed_run(runner, len(envelopes)))
    return rates[0], rates[1]


def remote_calls(messages: int, concurrency: int = 100) -> tuple[float, float]:
    async def sequential(n: int) -> float:
        task = RemoteCall()
        start = time.perf_counter()
        for _ in range(n):
            await task.process(None, None, None)
        return n / (time.perf_counter() - start)

    # The baseline runs on the same (precise-timer) loop the container runs on.
    ideal = concurrency * event_loop.run(sequential(100))
    runner = (
        TestRunner.of(RemoteCall)
        .add_input("in", list(range(messages)))
        .add_config({"task.max.concurrency": str(concurrency)})
    )
    return ideal, timed_run(runner, messages)


def awaiting_cpu(messages: int, concurrency: int = 100) -> tuple[float, float]:
    """(asyncio's CPU microseconds per message, the loop thread's per message of (c)): ``create_task`` of the
    awaiting coroutine, ``concurrency`` at a time, against TestRunner running (c); both on this thread."""

    async def tasks() -> None:
        room = asyncio.Semaphore(concurrency)
        call = RemoteCall().process

        async def one() -> None:
            try:
                await call(None, None, None)
            finally:
                room.release()

        running: set[asyncio.Task[None]] = set()
        for _ in range(messages):
            await room.acquire()
            task = asyncio.create_task(one())
            running.add(task)
            task.add_done_callback(running.discard)
        await asyncio.gather(*running)

    start = time.thread_time()
    event_loop.run(tasks())
    bare = (time.thread_time() - start) / messages * 1e6
    runner = (
        TestRunner.of(RemoteCall)
        .add_input("in", list(range(messages)))
        .add_config({"task.max.concurrency": str(concurrency)})
    )
    with frozen_input():
        start = time.thread_time()
        run_checked(runner, messages)
        return bare, (time.thread_time() - start) / messages * 1e6


def async_without_suspending(messages: int, concurrency: int = 100) -> tuple[float, float]:
    """(the sync pass-through's rate, the rate of the same task as an ``async def`` that completes without
    suspending, at ``concurrency``), both through TestRunner over one partition."""
    sync, _ = runner_for(PassThrough, messages, 1, dicts=False)
    with frozen_input():
        sync_rate = timed_run(sync, messages)
    runner, _ = runner_for(AsyncPassThrough, messages, 1, dicts=False)
    runner.add_config({"task.max.concurrency": str(concurrency)})
    with frozen_input():
        return sync_rate, timed_run(runner, messages)


def row(name: str, baseline: str, runs: int, measure: Callable[[], tuple[float, float]]) -> tuple[Any, ...]:
    pairs = [measure() for _ in range(runs)]
    return (
        name,
        statistics.median(r for _, r in pairs),
        statistics.median(r / b for b, r in pairs),
        baseline,
        statistics.median(b for b, _ in pairs),
    )


def main(argv: list[str] | None = None) -> int:
    global FREEZE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages of every sync workload")
    parser.add_argument("--async-messages", type=int, default=20_000, help="messages for (c)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-freeze", action="store_true", help="leave the input to the collector")
    args = parser.parse_args(argv)
    FREEZE = not args.no_freeze
    n, runs = args.messages, args.runs

    rows = [
        row(
            "(c) async 5 ms call, concurrency 100",
            "ideal overlap",
            runs,
            lambda: remote_calls(args.async_messages),
        ),
        row(
            "(i) loop CPU per (c) message, us",
            "asyncio create_task + the call",
            runs,
            lambda: awaiting_cpu(args.async_messages),
        ),
        row(
            "(h) async def, no suspension, conc. 100",
            "the same sync task",
            runs,
            lambda: async_without_suspending(n),
        ),
        row("(a) pass-through, 1 partition", "bare loop", runs, lambda: compare(PassThrough, n, 1)),
        row("(a) pass-through, 8 partitions", "bare loop", runs, lambda: compare(PassThrough, n, 8)),
        row("(b) message['v'] * 2, 1 partition", "bare loop", runs, lambda: compare(Double, n, 1, True)),
        row("(b) message['v'] * 2, 8 partitions", "bare loop", runs, lambda: compare(Double, n, 8, True)),
        row("(e) map + filter + send, 1 partition", "bare loop + list", runs, lambda: compare_output(n, 1)),
        row("(e) map + filter + send, 8 partitions", "bare loop + list", runs, lambda: compare_output(n, 8)),
        row(
            "(e) the same with send_to, 1 partition",
            "bare loop + list",
            runs,
            lambda: compare_output(n, 1, MapFilterTo),
        ),
        row(
            "(e) the same with send_to, 8 partitions",
            "bare loop + list",
            runs,
            lambda: compare_output(n, 8, MapFilterTo),
        ),
        row("(f) pass-through, subscriber of all", "no subscriber", runs, lambda: observed(n, None)),
        row(
            "(g) pass-through, subscriber of commits",
            "no subscriber",
            runs,
            lambda: observed(n, [Committed, WindowFired]),
        ),
    ]
    print(f"medians of {runs} runs, {n:,} messages{'' if FREEZE else ', input not frozen'}")
    print(f"{'workload':40} {'msgs/s':>12} {'ratio':>7}  baseline")
    for name, rate, ratio, baseline, base_rate in rows:
        if name.endswith(", us"):
            print(f"{name:40} {rate:12.1f} {ratio:7.3f}  {baseline} ({base_rate:.1f} us)")
        else:
            print(f"{name:40} {rate:12,.0f} {ratio:7.3f}  {baseline} ({base_rate:,.0f} msgs/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
