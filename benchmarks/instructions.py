"""Instructions per message, counted by callgrind on the job's run only: figures that do not drift with
the machine's load, so a regression shows as a count, not as noise.

Each workload runs three times in one process under ``valgrind --tool=callgrind``: a warm-up (not
counted), then N messages and 2N messages, each run inside ``sys.call_tracing`` so that callgrind collects
only there (``--collect-atstart=no --toggle-collect=_PyEval_CallTracing``, the C function that call
runs the job in) and writes one dump per run (``--dump-after``). Instructions per message are
``(I(2N) - I(N)) / N``: the job's start-up and end, the same in both runs, cancel; building the input
happens before the run and is not counted.

Workloads (the rows of ``benchmarks/core.py`` and ``state.py`` they stand beside):

- pass-through: a sync task doing nothing, 1 partition ((a));
- send: map + filter sending ``OutgoingMessageEnvelope`` with ``collector.send`` ((e));
- send_to: the same with ``collector.send_to`` ((e) send_to);
- DuckDB count: a per-key count in a DuckDB store (state.py);
- async no-suspend: an ``async def`` pass-through, concurrency 100 ((h));
- async suspend: an ``async def`` awaiting a future that the event loop resolves on its next turn,
  concurrency 100 ((c) without the timer: the count does not depend on when timers fire);
- asyncio alone: ``create_task`` of the same awaiting coroutine, 100 at a time, no container (the
  baseline of the one above: what asyncio costs).

The loop cuts its work into slices by time (5 ms): under callgrind the job runs ~50 times slower, so a
slice would hold ~50 times fewer messages and its fixed costs would weigh per message as on no real
machine, more so the more loaded it is. The counted process stops the slices' clock
(``time.perf_counter``; only the loop's slicing reads it): batches grow to their largest, as on a fast
machine. Commits run at end of stream only (``task.commit.ms`` an hour: a timer that does not fire).

Without valgrind the script says so in one line and exits 0 (``apt-get install valgrind``). The Python
running it must keep its symbols (callgrind finds ``_PyEval_CallTracing`` by name); a stripped one
counts nothing, which the script reports.

Run: ``python benchmarks/instructions.py [--messages N] [--async-messages N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.core import AsyncPassThrough, MapFilter, MapFilterTo, PassThrough
from benchmarks.output_check import same
from benchmarks.state import StoreCount
from samza_nb.container import event_loop
from samza_nb.testing import TestRunner

CONCURRENCY = 100
SYMBOL = "_PyEval_CallTracing"


async def next_turn() -> None:
    """Suspend on a future that the event loop resolves on its next turn (an awaited call, no timer)."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    loop.call_soon(future.set_result, None)
    await future


class AsyncSuspending:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        await next_turn()


def _runner(task: type, values: list[Any], config: dict[str, str] | None = None) -> Callable[[], int]:
    config = {"task.commit.ms": str(3_600_000), **(config or {})}
    runner = TestRunner.of(task).add_input("in", values).add_config(config)
    return lambda: runner.run(timeout=3600).processed


def _store(state: str) -> dict[str, str]:
    return {
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "long",
        "job.logged.store.base.dir": state,
    }


def _asyncio_alone(n: int) -> Callable[[], int]:
    """``create_task`` of ``n`` awaiting coroutines, at most CONCURRENCY at a time."""

    async def main() -> int:
        room = asyncio.Semaphore(CONCURRENCY)
        done = 0

        async def one() -> None:
            nonlocal done
            try:
                await next_turn()
                done += 1
            finally:
                room.release()

        tasks: set[asyncio.Task[None]] = set()
        for _ in range(n):
            await room.acquire()
            task = asyncio.create_task(one())
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        while tasks:
            await asyncio.gather(*tasks)
        return done

    return lambda: event_loop.run(main())


ASYNC = {"task.max.concurrency": str(CONCURRENCY)}

# name: (the core.py/state.py row it stands beside, async?, the run of n messages)
WORKLOADS: dict[str, tuple[str, bool, Callable[[int, str], Callable[[], int]]]] = {
    "pass-through": ("core (a)", False, lambda n, _: _runner(PassThrough, list(range(n)))),
    "send": ("core (e)", False, lambda n, _: _runner(MapFilter, [{"v": i} for i in range(n)])),
    "send_to": ("core (e) send_to", False, lambda n, _: _runner(MapFilterTo, [{"v": i} for i in range(n)])),
    "DuckDB count": (
        "state",
        False,
        lambda n, state: _runner(StoreCount, [f"key-{i % 1000}" for i in range(n)], _store(state)),
    ),
    "async no-suspend": (
        "core (h)",
        True,
        lambda n, _: _runner(AsyncPassThrough, list(range(n)), ASYNC),
    ),
    "async suspend": ("core (c)", True, lambda n, _: _runner(AsyncSuspending, list(range(n)), ASYNC)),
    "asyncio alone": ("baseline of the above", True, lambda n, _: _asyncio_alone(n)),
}


def child(names: list[str], messages: int, async_messages: int) -> list[str]:
    """Run each workload: a warm-up, then N and 2N messages inside ``sys.call_tracing`` (what callgrind
    counts); returns the labels of the counted runs, in order."""
    perf_counter = time.perf_counter
    time.perf_counter = lambda: 0.0  # the slices' clock stops (see the module)
    try:
        return _counted_runs(names, messages, async_messages)
    finally:
        time.perf_counter = perf_counter


def _counted_runs(names: list[str], messages: int, async_messages: int) -> list[str]:
    labels = []
    for name in names:
        _, is_async, make = WORKLOADS[name]
        n = async_messages if is_async else messages
        for size, counted in ((max(n // 10, 10), False), (n, True), (2 * n, True)):
            with tempfile.TemporaryDirectory() as state:
                run = make(size, state)  # the input is built here, outside the count
                processed = sys.call_tracing(run, ()) if counted else run()
            same(f"{name}: messages processed", processed, size)
            if counted:
                labels.append(f"{name}/{size}")
    return labels


def _totals(out: Path) -> list[int]:
    """The instructions of each dump callgrind wrote (``<out>.1``, ``<out>.2``, ...), in order."""
    dumps = sorted(out.parent.glob(out.name + ".*"), key=lambda p: int(p.suffix[1:]))
    totals = []
    for dump in dumps:
        match = re.search(r"^(?:summary|totals): (\d+)", dump.read_text(), re.MULTILINE)
        totals.append(int(match.group(1)) if match else 0)
    return totals


def count(names: list[str], messages: int, async_messages: int, valgrind: str) -> dict[str, float] | str:
    """Instructions per message of each workload, or a line saying why there are none."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        labels_file = Path(tmp) / "labels.json"
        command = [
            valgrind,
            "--tool=callgrind",
            "--collect-atstart=no",
            f"--toggle-collect={SYMBOL}",
            f"--dump-after={SYMBOL}",
            f"--callgrind-out-file={out}",
            sys.executable,
            __file__,
            "--child",
            str(labels_file),
            "--messages",
            str(messages),
            "--async-messages",
            str(async_messages),
            "--only",
            ",".join(names),
        ]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            return f"instructions per message: the run under callgrind failed: {done.stderr.strip()[-400:]}"
        labels = json.loads(labels_file.read_text())
        totals = _totals(out)
    if len(totals) < len(labels) or not any(totals):
        return f"instructions per message: callgrind found no {SYMBOL} in {sys.executable} (stripped?)"
    by_label = dict(zip(labels, totals, strict=False))
    per: dict[str, float] = {}
    for name in names:
        n = async_messages if WORKLOADS[name][1] else messages
        per[name] = (by_label[f"{name}/{2 * n}"] - by_label[f"{name}/{n}"]) / n
    return per


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20_000, help="N of every sync workload")
    parser.add_argument("--async-messages", type=int, default=5_000, help="N of the async workloads")
    parser.add_argument("--only", default=",".join(WORKLOADS), help="workloads, comma-separated")
    parser.add_argument("--valgrind", default="valgrind", help="the valgrind to run")
    parser.add_argument("--child", metavar="LABELS", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    names = [name for name in args.only.split(",") if name]
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; known: {', '.join(WORKLOADS)}")
    if args.child:
        labels = child(names, args.messages, args.async_messages)
        Path(args.child).write_text(json.dumps(labels))
        return 0
    valgrind = shutil.which(args.valgrind)
    if valgrind is None:
        print("instructions per message: skipped, valgrind is not installed (apt-get install valgrind)")
        return 0
    per = count(names, args.messages, args.async_messages, valgrind)
    if isinstance(per, str):
        print(per)
        return 0
    print(
        f"instructions per message (callgrind, the job's run only; N = {args.messages:,} sync, "
        f"{args.async_messages:,} async)"
    )
    for name, instructions in per.items():
        print(f"{name:24} {instructions:10,.0f}  beside {WORKLOADS[name][0]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
