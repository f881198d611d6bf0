"""Applications planned and run end to end on TestRunner: bounded jobs through partition_by stop by
themselves, source watermarks reconcile across producers, split applications, errors before anything runs."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.config import Config
from samza_nb.errors import SamzaError
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.operators.prepare import prepare_application
from samza_nb.systems.inmemory.system import InMemoryBroker
from samza_nb.testing import Message, TestRunner, Watermark

X = "test-job-1-partition_by-by-key"
DELIVERED: list[Any] = []


class Repartition(StreamApplication):
    """Numbers repartitioned by their remainder mod 3; each one handed to a sink and sent to "out"."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        keyed = app.get_input_stream("in").map(lambda n: n * 10).partition_by(lambda n: n % 3, op_id="by-key")
        keyed.sink(lambda kv, collector, coordinator: DELIVERED.append(kv.value))
        keyed.map(lambda kv: kv.value).send_to(app.get_output_stream("out"))


def delivered(result: Any) -> Counter[Any]:
    return Counter(v for values in result.output("out").values() for v in values)


def test_40_bounded_messages_through_partition_by_stop_by_themselves() -> None:
    DELIVERED.clear()
    messages = {0: list(range(20)), 1: list(range(20, 40))}
    result = TestRunner.of(Repartition).add_input("in", messages).add_output("out", 2).run(timeout=20)
    assert delivered(result) == Counter(n * 10 for n in range(40))
    assert sorted(DELIVERED) == [n * 10 for n in range(40)]
    # Each task consumed its partitions of the source and of the intermediate stream to the end.
    assert set(result.checkpoints) == {"Partition 0", "Partition 1"}
    for task, offsets in result.checkpoints.items():
        assert {ssp.stream for ssp in offsets} == {"in", X}, task


def test_the_same_application_split_in_two_jobs_stops_by_itself() -> None:
    messages = {0: list(range(20)), 1: list(range(20, 40))}
    result = (
        TestRunner.of(Repartition())
        .add_input("in", messages)
        .add_output("out", 2)
        .add_config({"app.split.jobs": "true"})
        .run(timeout=20)
    )
    assert delivered(result) == Counter(n * 10 for n in range(40))
    assert set(result.checkpoints) == {f"test-job-stage-{s}/Partition {p}" for s in (0, 1) for p in (0, 1)}
    assert {ssp.stream for ssp in result.checkpoints["test-job-stage-1/Partition 0"]} == {X}


class Watermarked(StreamApplication):
    """The issue's scenario: source watermarks through a partition_by into 2 partitions."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        (
            app.get_input_stream("in")
            .partition_by(lambda m: m, op_id="by-key")
            .map(lambda kv: kv.value)
            .send_to(app.get_output_stream("out"))
        )


def test_source_watermarks_reconcile_across_the_partition_bys_producers() -> None:
    inputs = {0: [Watermark(1), Watermark(4)], 1: [Watermark(2), Watermark(3)]}
    result = (
        TestRunner.of(Watermarked)
        .add_input("in", inputs)
        .add_output("out")
        .add_config({"job.intermediate.stream.partitions": 2})
        .run(timeout=20)
    )
    source, middle = SystemStream("test", "in"), SystemStream("test", X)
    # The partition_by operators' input watermarks are 4 and 3; downstream, both partitions reach 3.
    assert result.watermarks == {
        "Partition 0": {source: 4, middle: 3},
        "Partition 1": {source: 3, middle: 3},
    }


class CountPerKey(StreamApplication):
    """Events ``(user, ...)`` with event times, counted per user in tumbling windows of 10 ms."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        (
            app.get_input_stream("clicks")
            .partition_by(lambda m: m, op_id="by-key")
            .window(Windows.tumbling(10, lambda: 0, lambda kv, n: n + 1, key_fn=lambda kv: kv.key), "counts")
            .map(lambda pane: (pane.key, pane.start_ms, pane.value))
            .send_to(app.get_output_stream("out"))
        )


def test_an_event_time_window_after_partition_by_fires_every_pane_by_the_end() -> None:
    clicks = {
        0: [Message("a", timestamp=1), Message("b", timestamp=3), Watermark(12), Message("a", timestamp=15)],
        1: [Message("a", timestamp=2), Watermark(11), Message("b", timestamp=21)],
    }
    result = TestRunner.of(CountPerKey).add_input("clicks", clicks).add_output("out").run(timeout=20)
    panes = sorted(v for values in result.output("out").values() for v in values)
    assert panes == [("a", 0, 2), ("a", 10, 1), ("b", 0, 1), ("b", 20, 1)]


def test_a_graph_that_cannot_run_is_refused_before_anything_runs() -> None:
    class Mismatched(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            left, right = app.get_input_stream("left"), app.get_input_stream("right")
            left.join(right, lambda m: m, lambda m: m, lambda m, o: (m, o), 1000, "j").send_to(
                app.get_output_stream("out")
            )

    runner = TestRunner.of(Mismatched).add_input("left", {0: [1], 1: [2]}).add_input("right", [1])
    with pytest.raises(SamzaError, match="join 'j' joins streams with different partition counts"):
        runner.add_output("out").run(timeout=20)
    assert runner.broker.read("out") == {0: []}


def test_an_input_the_runner_was_not_given_is_named() -> None:
    with pytest.raises(SamzaError, match=r"input stream 'in' \(test.in\)"):
        TestRunner.of(Repartition).add_input("other", [1]).run(timeout=20)


def test_prepare_creates_the_intermediate_streams_and_plans_each_job() -> None:
    broker = InMemoryBroker.named("prepare-test", "mem")
    broker.create_stream("in", 3)
    config = Config(
        {
            "job.name": "app",
            "job.default.system": "mem",
            "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            "systems.mem.inmemory.namespace": "prepare-test",
            "app.split.jobs": "true",
        }
    )
    try:
        prepared = asyncio.run(prepare_application(Repartition, config))
        assert broker.partition_count("app-1-partition_by-by-key") == 3
        assert [job.job_name() for job in prepared.jobs] == ["app-stage-0", "app-stage-1"]
        assert prepared.plan.streams["app-1-partition_by-by-key"].producers == 3
        assert callable(prepared.task_factory)
    finally:
        InMemoryBroker.drop("prepare-test")
