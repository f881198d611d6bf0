"""Operator tasks in the container (TestRunner, one job): bounded jobs with a partition_by stop by
themselves, source watermarks reconcile through the intermediate stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from samza_nb.api.streams import SystemStream
from samza_nb.control.messages import WatermarkMessage
from samza_nb.observe.events import Event, WatermarkAdvanced
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor
from samza_nb.testing.runner import Message
from tests.unit.operators.harness import AppRun

DELIVERED: list[Any] = []


class Repartitioned(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        (
            app.get_input_stream("in")
            .partition_by(lambda m: m % 3, op_id="p")
            .sink(lambda kv, collector, coordinator: DELIVERED.append(kv.value))
        )


def test_forty_bounded_messages_through_partition_by_stop_by_themselves(tmp_path: Path) -> None:
    DELIVERED.clear()
    run = AppRun(Repartitioned, {"in": {0: list(range(0, 40, 2)), 1: list(range(1, 40, 2))}}, tmp_path)
    result = run.runner.run(timeout=20)
    assert sorted(DELIVERED) == list(range(40))
    assert result.processed >= 40


def test_source_watermarks_reconcile_across_tasks(tmp_path: Path) -> None:
    events: list[Event] = []

    def wm(timestamp: int) -> WatermarkMessage:
        return WatermarkMessage(timestamp=timestamp)

    sources = {"in": {0: [Message(0, timestamp=0), wm(1), wm(4)], 1: [Message(1, timestamp=0), wm(2), wm(3)]}}
    run = AppRun(Repartitioned, sources, tmp_path)
    run.runner.subscribe(events.append, [WatermarkAdvanced])
    run.runner.run(timeout=20)
    last: dict[tuple[str, SystemStream], int] = {}
    for event in events:
        assert isinstance(event, WatermarkAdvanced)
        last[(event.task, event.system_stream)] = event.watermark
    middle = SystemStream("test", "test-job-1-partition_by-p")
    source = SystemStream("test", "in")
    assert last == {
        ("Partition 0", source): 4,
        ("Partition 1", source): 3,
        ("Partition 0", middle): 3,
        ("Partition 1", middle): 3,
    }
