"""Chooser cost: the pass-through workload with priority + batching configured, as a ratio to plain round
robin measured in the same run.

Run: ``python benchmarks/choosers.py [--messages N] [--runs R]``; prints medians of R runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb.testing import TestRunner


class PassThrough:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


def rate(messages: int, config: dict[str, str]) -> float:
    half = messages // 2
    runner = (
        TestRunner.of(PassThrough)
        .add_input("in", {0: list(range(half)), 1: list(range(messages - half))})
        .add_input("side", list(range(10)))
        .add_config(config)
    )
    start = time.perf_counter()
    result = runner.run(timeout=600)
    elapsed = time.perf_counter() - start
    same(f"{config or 'round robin'}: messages processed", result.processed, messages + 10)
    return result.processed / elapsed


LAYERED = {
    "systems.test.streams.in.samza.priority": "2",
    "systems.test.streams.side.samza.priority": "1",
    "task.consumer.batch.size": "100",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    pairs = [(rate(args.messages, {}), rate(args.messages, LAYERED)) for _ in range(args.runs)]
    plain = statistics.median(p for p, _ in pairs)
    layered = statistics.median(q for _, q in pairs)
    ratio = statistics.median(q / p for p, q in pairs)
    print(f"medians of {args.runs} runs, {args.messages:,} messages over 2 partitions")
    print(f"{'round robin':34} {plain:12,.0f} msgs/s")
    print(f"{'priority + batching (100)':34} {layered:12,.0f} msgs/s  ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
