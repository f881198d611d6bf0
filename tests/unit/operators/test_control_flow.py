"""Watermarks and end-of-stream through an intermediate stream, task by task: two operator tasks called
directly, the envelopes each sends to the intermediate stream delivered to the task holding the target
partition (as the container would), the bookkeeping restored after restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.api.task import RequestScope
from samza_nb.control.messages import EndOfStreamMessage, WatermarkMessage
from samza_nb.control.sender import aggregation_partition
from samza_nb.observe.events import EndOfStreamProgress, WatermarkAdvanced
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.systems.inmemory.partition import stable_partition
from tests.unit.operators.harness import Driver, plan_for

STREAM = "test-job-1-partition_by-p"
SOURCE = SystemStream("test", "in")
MIDDLE = SystemStream("test", STREAM)
DELIVERED: list[Any] = []


class Repartitioned(StreamApplication):
    """``(key, value)`` messages repartitioned by key, then counted per key in tumbling windows of 10 ms
    (panes to "out"), and every value handed to a sink."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        by_key = app.get_input_stream("in").partition_by(lambda m: m[0], lambda m: m[1], "p")
        by_key.sink(lambda kv, collector, coordinator: DELIVERED.append(kv.value))
        (
            by_key.window(Windows.tumbling(10, lambda: 0, lambda kv, n: n + 1, key_fn=lambda kv: kv.key), "w")
            .map(lambda pane: (pane.key, pane.start_ms, pane.value))
            .send_to(app.get_output_stream("out"))
        )


class Cluster:
    """One driver per partition ("Partition <n>" holds partition n of the source and of the
    intermediate stream); :meth:`pump` delivers what they sent to the intermediate stream."""

    def __init__(self, tmp_path: Path, partitions: int = 2) -> None:
        self.plan = plan_for(Repartitioned, {"in": partitions})
        assert self.plan.streams[STREAM].producers == partitions
        self.partitions = partitions
        self.drivers = [
            Driver(
                Repartitioned,
                self.plan,
                f"Partition {n}",
                [SystemStreamPartition("test", "in", n), SystemStreamPartition("test", STREAM, n)],
                tmp_path / f"task-{n}",
            )
            for n in range(partitions)
        ]
        self.outputs: list[Any] = []

    def source(self, n: int) -> SystemStreamPartition:
        return SystemStreamPartition("test", "in", n)

    def pump(self) -> None:
        """Deliver every envelope sent to the intermediate stream until none is left."""
        while True:
            sent = [e for d in self.drivers for e in d.take()]
            if not sent:
                return
            for envelope in sent:
                if envelope.system_stream != MIDDLE:
                    self.outputs.append(envelope.message)
                    continue
                partition = envelope.partition
                if partition is None:
                    partition = stable_partition(envelope.partition_key, self.partitions)
                ssp = SystemStreamPartition("test", STREAM, partition)
                driver = self.drivers[partition]
                driver.message(ssp, envelope.message, envelope.timestamp, envelope.key)

    def watermarks(self, n: int, stream: SystemStream) -> list[int]:
        return [
            e.watermark
            for e in self.drivers[n].events
            if isinstance(e, WatermarkAdvanced) and e.system_stream == stream
        ]

    def voted(self, n: int) -> bool:
        c = self.drivers[n].coordinator
        return (
            c.commit_request is RequestScope.CURRENT_TASK and c.shutdown_request is RequestScope.CURRENT_TASK
        )


def test_source_watermarks_reconcile_through_the_intermediate_stream(tmp_path: Path) -> None:
    """Samza's scenario: partition 0 gets watermarks 1 then 4, partition 1 gets 2 then 3; through a
    partition_by into 2 partitions each task's source watermark ends at 4 and 3, the intermediate
    stream's at 3 in both tasks."""
    c = Cluster(tmp_path)
    for n, timestamp in ((0, 1), (1, 2), (0, 4), (1, 3)):
        c.drivers[n].watermark(c.source(n), timestamp)
        c.pump()
    assert c.watermarks(0, SOURCE) == [1, 4]
    assert c.watermarks(1, SOURCE) == [2, 3]
    assert c.watermarks(0, MIDDLE)[-1] == 3
    assert c.watermarks(1, MIDDLE)[-1] == 3
    for n in (0, 1):  # never backwards, only when advancing
        marks = c.watermarks(n, MIDDLE)
        assert marks == sorted(set(marks))


def test_producers_send_control_messages_to_the_aggregation_partition(tmp_path: Path) -> None:
    c = Cluster(tmp_path)
    c.drivers[0].watermark(c.source(0), 7)
    sent = c.drivers[0].take()
    assert [(e.message, e.partition) for e in sent] == [
        (WatermarkMessage("Partition 0", timestamp=7), aggregation_partition(STREAM, 2))
    ]
    c.drivers[0].end(c.source(0))
    sent = c.drivers[0].take()
    assert [(e.message, e.partition) for e in sent] == [
        (EndOfStreamMessage("Partition 0"), aggregation_partition(STREAM, 2))
    ]


def test_windows_after_the_intermediate_stream_fire_on_the_reconciled_watermark(tmp_path: Path) -> None:
    c = Cluster(tmp_path)
    c.drivers[0].message(c.source(0), ("a", 1), 1)
    c.drivers[1].message(c.source(1), ("b", 2), 2)
    c.drivers[1].message(c.source(1), ("a", 3), 12)
    c.pump()
    c.drivers[0].watermark(c.source(0), 20)
    c.pump()
    assert c.outputs == []  # partition 1 has sent no watermark yet
    c.drivers[1].watermark(c.source(1), 10)
    c.pump()
    assert sorted(c.outputs) == [("a", 0, 1), ("b", 0, 1)]


def test_forty_bounded_messages_through_partition_by_end_every_task(tmp_path: Path) -> None:
    DELIVERED.clear()
    c = Cluster(tmp_path)
    for i in range(40):
        n = i % 2
        c.drivers[n].message(c.source(n), (f"k{i % 7}", i), i)
    c.pump()
    for n in (0, 1):
        c.drivers[n].end(c.source(n))
        c.pump()
    assert sorted(DELIVERED) == list(range(40))
    assert c.voted(0) and c.voted(1)
    assert sum(count for _, _, count in c.outputs) == 40
    progress = [e for d in c.drivers for e in d.events if isinstance(e, EndOfStreamProgress)]
    aggregator = aggregation_partition(STREAM, 2)
    seen = [e.producers_seen for e in progress if e.ssp.partition == aggregator]
    assert seen == [("Partition 0",), ("Partition 0", "Partition 1")]
    assert all(e.ended for e in progress if e.ssp.partition != aggregator)


def test_a_restarted_aggregator_waits_only_for_the_producer_still_missing(tmp_path: Path) -> None:
    c = Cluster(tmp_path)
    aggregator = c.drivers[aggregation_partition(STREAM, 2)]
    other = c.drivers[1 - aggregation_partition(STREAM, 2)]
    other.end(c.source(1 - aggregation_partition(STREAM, 2)))
    c.pump()
    aggregator.restart()
    aggregator.end(c.source(aggregation_partition(STREAM, 2)))
    c.pump()
    assert c.voted(0) and c.voted(1)


def test_a_job_restarted_after_its_round_ended_ends_again_with_its_inputs(tmp_path: Path) -> None:
    # A complete round is not restored: the sources end again on the new start, and so do the producers
    # (a job run again over grown bounded inputs takes the new messages before it stops).
    c = Cluster(tmp_path)
    for n in (0, 1):
        c.drivers[n].end(c.source(n))
        c.pump()
    assert c.voted(0) and c.voted(1)
    for d in c.drivers:
        d.restart()
    c.drivers[0].message(c.source(0), ("a", "again"), 1)
    c.pump()
    assert not c.voted(0) and not c.voted(1)
    for n in (0, 1):
        c.drivers[n].end(c.source(n))
        c.pump()
    assert c.voted(0) and c.voted(1)
