"""Core container throughput, each figure a ratio to a baseline measured in the same run.

(a) sync pass-through task, concurrency 1, against a bare Python loop calling process() on the same
    envelopes;
(b) ``async def`` task awaiting a 5 ms call, concurrency 100, against the ideal overlap (100 x the sequential
    rate measured here);
(c) the observe bus: pass-through with one (empty) subscriber against none.

Run: ``python benchmarks/core.py [--messages N] [--runs R]``; prints medians of R runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from samza_nb import SystemStreamPartition
from samza_nb.container import event_loop
from samza_nb.observe import Committed, WindowFired
from samza_nb.testing import TestRunner


class PassThrough:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class RemoteCall:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        await asyncio.sleep(0.005)


def timed_run(runner: TestRunner, messages: int) -> float:
    start = time.perf_counter()
    result = runner.run(timeout=600)
    elapsed = time.perf_counter() - start
    assert result.processed == messages, (result.processed, messages)
    return messages / elapsed


def passthrough(messages: int, subscribe: bool = False, rare_only: bool = False) -> tuple[float, float]:
    runner = TestRunner.of(PassThrough).add_input("in", list(range(messages)))
    if subscribe:
        runner.subscribe(lambda event: None)
    if rare_only:
        runner.subscribe(lambda event: None, events=[Committed, WindowFired])
    envelopes, _ = runner.broker.envelopes(SystemStreamPartition("test", "in", 0), 0)
    task = PassThrough()
    start = time.perf_counter()
    for envelope in envelopes:
        task.process(envelope, None, None)
    bare = messages / (time.perf_counter() - start)
    return bare, timed_run(runner, messages)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages for (a) and (c)")
    parser.add_argument("--async-messages", type=int, default=20_000, help="messages for (b)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)

    rows = []
    b = [remote_calls(args.async_messages) for _ in range(args.runs)]
    gc.collect()
    a = [passthrough(args.messages) for _ in range(args.runs)]
    rate = statistics.median(r for _, r in a)
    ratio = statistics.median(r / b for b, r in a)
    rows.append(
        ("(a) sync pass-through, concurrency 1", rate, ratio, "bare loop", statistics.median(b for b, _ in a))
    )
    rows.append(
        (
            "(b) async 5 ms call, concurrency 100",
            statistics.median(r for _, r in b),
            statistics.median(r / i for i, r in b),
            "ideal overlap",
            statistics.median(i for i, _ in b),
        )
    )
    c = [
        (passthrough(args.messages)[1], passthrough(args.messages, subscribe=True)[1])
        for _ in range(args.runs)
    ]
    rows.append(
        (
            "(c) pass-through with an observe subscriber",
            statistics.median(s for _, s in c),
            statistics.median(s / n for n, s in c),
            "no subscriber",
            statistics.median(n for n, _ in c),
        )
    )
    d = [
        (passthrough(args.messages)[1], passthrough(args.messages, rare_only=True)[1])
        for _ in range(args.runs)
    ]
    rows.append(
        (
            "(d) pass-through, subscriber of commits only",
            statistics.median(s for _, s in d),
            statistics.median(s / n for n, s in d),
            "no subscriber",
            statistics.median(n for n, _ in d),
        )
    )
    print(f"medians of {args.runs} runs")
    print(f"{'workload':46} {'msgs/s':>12} {'ratio':>7}  baseline")
    for name, rate, ratio, baseline, base_rate in rows:
        print(f"{name:46} {rate:12,.0f} {ratio:7.3f}  {baseline} ({base_rate:,.0f} msgs/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
