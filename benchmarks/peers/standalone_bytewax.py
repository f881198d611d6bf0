"""Bytewax on W1, W2 and W3 of the peers benchmark, in one file a reader can run alone (only bytewax
needed): ``python benchmarks/peers/standalone_bytewax.py [--workload W1|W2|W3] [--messages N]``.

A ``Dataflow`` of ``bytewax.operators`` run by ``bytewax.testing.run_main`` (one worker) from
``TestingSource`` to ``TestingSink``. ``TestingSource`` hands out batches of 1,000 (``batch_size``; its
default of 1 is for tests, 1,000 is ``KafkaSource``'s default). W1 ``map`` + ``filter``; W2 ``key_on`` +
``stateful_map`` (a count per key, 1,000 keys, state in memory); W3 ``flat_map_batch`` over batches of
100 (the concurrency of the workload), each batch's 5 ms calls awaited together with ``asyncio.gather``.
The clock runs from building the dataflow to ``run_main`` returning (the input built before it, frozen
out of the garbage collector); the output is checked. Prints one
JSON line; benchmarks/peers/run.py runs it beside its own bytewax rows as a cross-check.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time
from typing import Any

import bytewax.operators as op
from bytewax.dataflow import Dataflow
from bytewax.testing import TestingSink, TestingSource, run_main

KEYS = 1000


def count(state: int | None, _message: Any) -> tuple[int, int]:
    total = (state or 0) + 1
    return total, total


async def call(x: int) -> int:
    await asyncio.sleep(0.005)
    return x


def run(workload: str, n: int) -> float:
    data: list[Any] = (
        [{"v": i} for i in range(n)]
        if workload == "W1"
        else [{"key": f"k{i % KEYS}"} for i in range(n)]
        if workload == "W2"
        else list(range(n))
    )
    gc.collect()
    gc.freeze()  # the input, built before the clock, out of the collector's walks (as the harness does)
    start = time.perf_counter()
    out: list[Any] = []
    flow = Dataflow(workload.lower())
    loop = asyncio.new_event_loop()
    if workload == "W1":
        source = op.input("in", flow, TestingSource(data, batch_size=1000))
        kept = op.filter("keep", op.map("map", source, lambda m: m["v"] * 3), lambda v: v % 2 == 0)
        op.output("out", kept, TestingSink(out))
    elif workload == "W2":
        source = op.input("in", flow, TestingSource(data, batch_size=1000))
        keyed = op.key_on("key", source, lambda m: m["key"])
        op.output("out", op.stateful_map("count", keyed, count), TestingSink(out))
    else:

        async def gathered(batch: list[int]) -> list[int]:
            return await asyncio.gather(*(call(x) for x in batch))

        source = op.input("in", flow, TestingSource(data, batch_size=100))
        calls = op.flat_map_batch("call", source, lambda batch: loop.run_until_complete(gathered(batch)))
        op.output("out", calls, TestingSink(out))
    try:
        run_main(flow)
    finally:
        loop.close()
    seconds = time.perf_counter() - start
    if workload == "W1":
        assert len(out) == len(range(0, n, 2)) and sum(out) == 3 * sum(range(0, n, 2)), "W1: wrong output"
    elif workload == "W2":
        final: dict[str, int] = {}
        for key, total in out:
            final[key] = max(final.get(key, 0), total)
        assert len(out) == n and set(final.values()) == {n // KEYS}, "W2: wrong counts"
    else:
        assert sorted(out) == list(range(n)), "W3: results missing or repeated"
    return n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workload", choices=("W1", "W2", "W3"), default="W1")
    parser.add_argument("--messages", type=int, default=None, help="default: 1,000,000 (W1, W2), 20,000 (W3)")
    args = parser.parse_args()
    n = args.messages or (20_000 if args.workload == "W3" else 1_000_000)
    rate = run(args.workload, n)
    result = {"library": "bytewax", "workload": args.workload, "messages": n, "rate": rate}
    if args.workload == "W3":
        result["ideal"] = rate / 20_000
    print(json.dumps(result))


if __name__ == "__main__":
    main()
