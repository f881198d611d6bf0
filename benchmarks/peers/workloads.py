"""What every contender of the peers benchmark shares: the workloads' inputs and functions, the checks of
their outputs, and the clock.

W1 map + filter with output: ``{"v": i}`` for i < n, mapped to ``v * 3``, the even results kept and sent on.
W2 keyed count with state: ``{"key": "k<i % keys>"}``; per message the key's count is read from state,
   incremented, written back and ``(key, count)`` sent on.
W3 an awaited 5 ms call (``asyncio.sleep``) per message, 100 calls in flight, each result sent on; the ideal
   is 100 / 5 ms = 20,000 messages/s.
W4 Kafka -> Kafka pass-through (100-byte values, 8-byte keys), as benchmarks/kafka_passthrough.py.

Every contender builds its input before the clock starts; the clock runs with the input frozen out of
the garbage collector (``gc.freeze``, as benchmarks/core.py), so no contender's collections walk it.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

CALL_SECONDS = 0.005
CONCURRENCY = 100
IDEAL_W3 = CONCURRENCY / CALL_SECONDS

T = TypeVar("T")


@dataclass(frozen=True)
class Params:
    """One child run's sizes and, for the Kafka rows, the broker and the topics filled in advance."""

    messages: int
    keys: int
    async_messages: int
    kafka_messages: int
    partitions: int
    streamz_kafka_messages: int = 100
    bootstrap: str = ""
    topics: tuple[tuple[str, str], ...] = ()  # (workload, input topic)

    def topic(self, workload: str) -> str:
        """The input topic filled in advance for ``workload``."""
        return dict(self.topics)[workload]


def w1_input(n: int) -> list[dict[str, int]]:
    return [{"v": i} for i in range(n)]


def w1_map(message: dict[str, int]) -> int:
    return message["v"] * 3


def w1_keep(value: int) -> bool:
    return value % 2 == 0


def check_w1(outputs: Iterable[int], n: int) -> None:
    """Every even ``3 * v`` exactly once."""
    values = list(outputs)
    evens = range(0, n, 2)
    assert len(values) == len(evens), f"W1: {len(values)} outputs, expected {len(evens)}"
    assert sum(values) == 3 * sum(evens), "W1: wrong values"


def w2_input(n: int, keys: int) -> list[dict[str, str]]:
    return [{"key": f"k{i % keys}"} for i in range(n)]


def check_w2(pairs: Iterable[tuple[str, int]], n: int, keys: int) -> None:
    """One ``(key, count)`` per message; each key's counts reach n / keys (n a multiple of keys)."""
    last: dict[str, int] = {}
    total = 0
    for key, count in pairs:
        total += 1
        if count > last.get(key, 0):
            last[key] = count
    assert total == n, f"W2: {total} outputs, expected {n}"
    assert len(last) == keys, f"W2: {len(last)} keys, expected {keys}"
    wrong = {k: c for k, c in last.items() if c != n // keys}
    assert not wrong, f"W2: final counts {dict(list(wrong.items())[:3])}, expected {n // keys}"


async def call(x: T) -> T:
    """The awaited call of W3: 5 ms, then its argument back."""
    await asyncio.sleep(CALL_SECONDS)
    return x


def check_w3(outputs: Iterable[int], n: int) -> None:
    """Every input's result exactly once."""
    assert sorted(outputs) == list(range(n)), "W3: results missing or repeated"


def timed(run: Callable[[], T]) -> tuple[float, T]:
    """(seconds, result) of ``run()``, the input prepared before it frozen out of the collector."""
    gc.collect()
    gc.freeze()
    try:
        start = time.perf_counter()
        result = run()
        return time.perf_counter() - start, result
    finally:
        gc.unfreeze()


class FirstSeen:
    """The time the first message was seen (the Kafka rows' clocks start there, as in
    benchmarks/kafka_passthrough.py: connecting and joining a group are not the pipeline's speed)."""

    at = 0.0

    @classmethod
    def mark(cls, message: Any) -> Any:
        """Record the first call's time; return ``message`` unchanged."""
        if not cls.at:
            cls.at = time.perf_counter()
        return message
