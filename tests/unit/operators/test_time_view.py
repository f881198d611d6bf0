"""The event time snapshot of an operator task reads a bounded part of a big window: the earliest-ending
entries of a heap without reading the whole heap."""

from __future__ import annotations

import heapq
import random
import time
from pathlib import Path

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.operators.impl.time_view import PANES_SHOWN, _smallest
from tests.unit.operators.harness import Driver, plan_for

IN = SystemStreamPartition("test", "in", 0)


class Sessions(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        app.get_input_stream("in").window(
            Windows.session(10, lambda: 0, lambda m, n: n + 1, key_fn=lambda m: m[0]), "w"
        ).send_to(app.get_output_stream("out"))


def test_the_smallest_entries_of_a_heap_are_the_k_smallest_in_order() -> None:
    rng = random.Random(42)
    for size in (0, 1, 2, 7, 100, 1000):
        heap = [(rng.randrange(10_000), n, f"key{n}") for n in range(size)]
        heapq.heapify(heap)
        for k in (0, 1, 5, 80):
            assert _smallest(heap, k) == sorted(heap)[:k]


def test_reading_them_costs_the_same_for_a_million_entries_as_for_a_thousand() -> None:
    small = [(n, n, None) for n in range(1_000)]
    big = [(n, n, None) for n in range(1_000_000)]  # (sorted: a heap)

    def cost(heap: list[tuple[int, int, None]]) -> float:
        started = time.perf_counter()
        for _ in range(200):
            _smallest(heap, 80)
        return time.perf_counter() - started

    cost(small)  # warm up
    assert cost(big) < 3 * cost(small)


def test_a_task_snapshot_has_its_partitions_operators_late_messages_and_earliest_panes(
    tmp_path: Path,
) -> None:
    d = Driver(Sessions, plan_for(Sessions, {"in": 1}), "Partition 0", [IN], tmp_path)
    for key in range(100):
        d.message(IN, (f"k{key:03}", key), 1_000 + 100 * key)  # a session per key, ending later and later
    d.message(IN, ("k000", "again"), 1_005)
    d.watermark(IN, 1_200)  # k000 and k001 (ending 1,015 and 1,110) fire
    d.message(IN, ("late", 0), 500)  # its session would have ended at 510: late
    snapshot = d.task.event_time()
    assert snapshot is not None and snapshot.task == "Partition 0"
    (partition,) = snapshot.inputs
    assert (partition.ssp, partition.watermark, partition.intermediate) == (IN, 1_200, False)
    window = next(o for o in snapshot.operators if o.op_id == "w")
    assert (window.input_watermark, window.window is not None) == (1_200, True)
    assert window.window is not None
    assert (window.window.late, window.window.fired, window.window.open_panes) == (1, 2, 98)
    listed = window.window.panes
    assert len(listed) == PANES_SHOWN
    assert [(p.key, p.start_ms, p.end_ms, p.count) for p in listed[:2]] == [
        ("k002", 1_200, 1_210, 1),
        ("k003", 1_300, 1_310, 1),
    ]
