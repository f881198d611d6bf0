"""streamz on W1 and W3 of the peers benchmark, in one file a reader can run alone (only streamz and
tornado needed): ``python benchmarks/peers/standalone_streamz.py [--workload W1|W3] [--messages N]``.

W1: ``Stream().map().filter().sink_to_list()`` fed by ``emit``. W3: an asynchronous ``Stream`` with
``map_async(f, parallelism=100)``, fed by ``await source.emit(x)`` (streamz's documented form: ``emit``
awaits a free slot), ``f`` an awaited 5 ms ``asyncio.sleep``; the ideal is 20,000 msg/s. The clock runs
from building the stream to the last result; the output is checked (every result exactly once). Prints
one JSON line: the workload, the rate, W3's share of the ideal. benchmarks/peers/run.py runs it beside
its own streamz rows as a cross-check (both should agree within the machine's noise).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import time

from streamz import Stream


def w1(n: int) -> float:
    data = [{"v": i} for i in range(n)]
    gc.collect()
    gc.freeze()  # the input, built before the clock, out of the collector's walks (as the harness does)
    start = time.perf_counter()
    source = Stream()
    out = source.map(lambda m: m["v"] * 3).filter(lambda v: v % 2 == 0).sink_to_list()
    for message in data:
        source.emit(message)
    seconds = time.perf_counter() - start
    assert len(out) == len(range(0, n, 2)) and sum(out) == 3 * sum(range(0, n, 2)), "W1: wrong output"
    return n / seconds


async def call(x: int) -> int:
    await asyncio.sleep(0.005)
    return x


def w3(n: int) -> float:
    out: list[int] = []

    async def run() -> None:
        done = asyncio.Event()

        def collect(result: int) -> None:
            out.append(result)
            if len(out) == n:
                done.set()

        source = Stream(asynchronous=True)
        source.map_async(call, parallelism=100).sink(collect)
        for x in range(n):
            await source.emit(x)
        await done.wait()

    start = time.perf_counter()
    asyncio.run(run())
    seconds = time.perf_counter() - start
    assert sorted(out) == list(range(n)), "W3: results missing or repeated"
    return n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--workload", choices=("W1", "W3"), default="W3")
    parser.add_argument("--messages", type=int, default=None, help="default: 1,000,000 (W1), 20,000 (W3)")
    args = parser.parse_args()
    n = args.messages or (1_000_000 if args.workload == "W1" else 20_000)
    rate = (w1 if args.workload == "W1" else w3)(n)
    result = {"library": "streamz", "workload": args.workload, "messages": n, "rate": rate}
    if args.workload == "W3":
        result["ideal"] = rate / 20_000
    print(json.dumps(result))


if __name__ == "__main__":
    main()
