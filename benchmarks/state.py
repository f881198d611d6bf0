"""A per-key count over 1M messages with a DuckDB store, as a ratio to the same task on a plain dict,
measured in the same run (commits included: the store's writes reach DuckDB at each commit).

As in ``core.py``, the input is built before the clock starts and then frozen out of the garbage
collector (``gc.freeze``): a job reading from a real system does not hold a million input objects, so its
collections do not walk them (``--no-freeze`` measures without).

Every run checks its final counts, key by key, against ``collections.Counter`` over the same words
(benchmarks/output_check.py: a mismatch raises, naming the first key that differs).

Run: ``python benchmarks/state.py [--messages N] [--keys K] [--runs R]``; prints medians of R runs.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb.testing import TestRunner


class DictCount:
    final: dict[str, int] = {}
    """The counts of the last run that ended (its end of stream; read by the output check)."""

    def init(self, context: Any) -> None:
        self.counts: dict[str, int] = {}

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        counts, key = self.counts, envelope.message
        counts[key] = counts.get(key, 0) + 1

    def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
        type(self).final = dict(self.counts)


class StoreCount:
    final: dict[str, int] = {}
    """The store's contents at the end of the last run (read once, after its last message)."""

    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        counts, key = self.counts, envelope.message
        counts.put(key, (counts.get(key) or 0) + 1)

    def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
        type(self).final = dict(self.counts.all())


FREEZE = True


def rate(task: Any, words: list[str], config: dict[str, str]) -> float:
    """Messages per second of ``task`` counting ``words``; its final counts checked against a Counter."""
    task.final = {}
    runner = TestRunner.of(task).add_input("in", words).add_config(config)
    gc.collect()
    if FREEZE:
        gc.freeze()
    try:
        start = time.perf_counter()
        result = runner.run(timeout=900)
        elapsed = time.perf_counter() - start
    finally:
        if FREEZE:
            gc.unfreeze()
    same(f"{task.__name__}: messages processed", result.processed, len(words))
    same(f"{task.__name__}: the final count of every key", task.final, dict(Counter(words)))
    return len(words) / elapsed


def _store_config(state: str, commit_ms: int) -> dict[str, str]:
    return {
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "long",
        "job.logged.store.base.dir": state,
        "task.commit.ms": str(commit_ms),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--commit-ms", type=int, default=1000)
    parser.add_argument("--no-freeze", action="store_true", help="leave the input to the collector")
    args = parser.parse_args(argv)
    global FREEZE
    FREEZE = not args.no_freeze
    rng = random.Random(1)
    vocabulary = [f"key-{i}" for i in range(args.keys)]
    words = [rng.choice(vocabulary) for _ in range(args.messages)]
    # The defaults (clean cache 1000, changes written once per commit), a cache that holds every key, and
    # Samza's sizes (batch 500: changes are then serialized about once per write, as before issue 10).
    variants = {
        "DuckDB store, defaults": {},
        "DuckDB store, cache >= keys": {"stores.counts.object.cache.size": str(max(args.keys, 1000))},
        "DuckDB store, batch 500 (Samza's)": {"stores.counts.write.batch.size": "500"},
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory() as state:  # warm-up: the first Arrow batch imports pandas (~0.5 s)
        rate(StoreCount, words[:20_000], {**_store_config(state, args.commit_ms)})
    for _ in range(args.runs):
        for name, extra in variants.items():
            with tempfile.TemporaryDirectory() as state:
                store_config = {**_store_config(state, args.commit_ms), **extra}
                results[name].append((rate(DictCount, words, {}), rate(StoreCount, words, store_config)))
    print(f"medians of {args.runs} runs: per-key count, {args.messages:,} messages over {args.keys:,} keys")
    plain = statistics.median(p for pairs in results.values() for p, _ in pairs)
    print(f"{'plain dict':34} {plain:12,.0f} msgs/s")
    for name, pairs in results.items():
        store = statistics.median(s for _, s in pairs)
        ratio = statistics.median(s / p for p, s in pairs)
        print(f"{name:34} {store:12,.0f} msgs/s  ratio {ratio:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
