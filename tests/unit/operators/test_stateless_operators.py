"""The stateless operators run by StreamOperatorTask: map, filter, flat_map, merge, send_to, sink."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.api.task import RequestScope
from samza_nb.errors import SamzaError
from samza_nb.operators import KV, StreamApplication, StreamApplicationDescriptor
from samza_nb.operators.plan import APP_PLAN_KEY
from samza_nb.operators.task import operator_task_factory
from samza_nb.testing import LoopMode, Message
from tests.unit.operators.harness import APPLICATION_MODES, Driver, app_runner, plan_for


class MapFilterFlatMap(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        out = app.get_output_stream("out")
        (
            app.get_input_stream("in")
            .map(lambda m: m * 10)
            .filter(lambda m: m != 20)
            .flat_map(lambda m: [m, m + 1] if m < 40 else [])
            .send_to(out)
        )


@pytest.mark.parametrize("mode", APPLICATION_MODES, ids=str)
def test_map_filter_flat_map_in_order(mode: LoopMode) -> None:
    runner = app_runner(MapFilterFlatMap, {"in": {0: [0, 1, 2, 3, 4, 5]}}, mode)
    result = runner.run()
    assert result.output("out") == {0: [0, 1, 10, 11, 30, 31]}


class Keyed(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        out = app.get_output_stream("out")
        app.get_input_stream("in").map(lambda m: KV(m % 2, m) if m < 3 else m).send_to(out)


@pytest.mark.parametrize("mode", APPLICATION_MODES, ids=str)
def test_send_to_sends_kv_as_key_and_value_and_keeps_timestamps(mode: LoopMode) -> None:
    runner = app_runner(Keyed, {"in": {0: [Message(i, timestamp=100 + i) for i in range(4)]}}, mode)
    runner.run()
    envelopes, _ = runner.broker.envelopes(SystemStreamPartition("test", "out", 0), 0)
    assert [(e.key, e.message, e.timestamp) for e in envelopes] == [
        (0, 0, 100),
        (1, 1, 101),
        (0, 2, 102),
        (None, 3, 103),
    ]


class Merged(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        out = app.get_output_stream("out")
        a = app.get_input_stream("a").map(lambda m: ("a", m))
        b = app.get_input_stream("b").map(lambda m: ("b", m))
        a.merge(b).send_to(out)


def test_merge_passes_every_input(tmp_path: Path) -> None:
    runner = app_runner(Merged, {"a": {0: [1, 2]}, "b": {0: [3]}})
    result = runner.run()
    assert sorted(result.output("out")[0]) == [("a", 1), ("a", 2), ("b", 3)]


SEEN: list[Any] = []


class Sinking(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        def sink(message: Any, collector: Any, coordinator: Any) -> None:
            SEEN.append(message)
            if message == "stop":
                coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)

        app.get_input_stream("in").sink(sink)


@pytest.mark.parametrize("mode", APPLICATION_MODES, ids=str)
def test_sink_gets_collector_and_coordinator(mode: LoopMode) -> None:
    SEEN.clear()
    runner = app_runner(Sinking, {"in": {0: ["a", "stop", "never"]}}, mode)
    runner.run()
    assert SEEN == ["a", "stop"]


@pytest.mark.parametrize("mode", APPLICATION_MODES, ids=str)
def test_several_partitions_run_as_several_tasks(mode: LoopMode) -> None:
    result = app_runner(MapFilterFlatMap, {"in": {0: [0, 1], 1: [3]}}, mode).run()
    assert sorted(result.output("out")[0]) == [0, 1, 10, 11, 30, 31]
    assert sorted(result.checkpoints) == ["Partition 0", "Partition 1"]


def test_factory_refuses_what_is_not_an_application() -> None:
    with pytest.raises(SamzaError, match="not a StreamApplication"):
        operator_task_factory(object())


def test_every_task_describes_the_graph_for_itself(tmp_path: Path) -> None:
    described: list[int] = []

    class Counting(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            if APP_PLAN_KEY in app.config:  # described by a task (not by the test's planning)
                described.append(1)
            app.get_input_stream("in").send_to(app.get_output_stream("out"))

    plan = plan_for(Counting, {"in": 3})
    factory = operator_task_factory(Counting)
    for n in range(3):
        ssp = SystemStreamPartition("test", "in", n)
        Driver(Counting, plan, f"Partition {n}", [ssp], tmp_path, factory=factory).close()
    assert described == [1, 1, 1]  # its own functions, as Samza gives each task its own operator graph


class Diamond(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        s = app.get_input_stream("in")
        tens = s.map(lambda m: m * 10)
        evens = s.filter(lambda m: m % 2 == 0)
        tens.merge(evens).send_to(app.get_output_stream("out"))
        s.flat_map(lambda m: range(m)).filter(lambda m: m > 0).send_to(app.get_output_stream("counts"))


@pytest.mark.parametrize("mode", APPLICATION_MODES, ids=str)
def test_fan_out_and_a_merge_of_two_branches_of_one_stream(mode: LoopMode) -> None:
    runner = app_runner(Diamond, {"in": {0: [1, 2, 3]}}, mode)
    result = runner.run()
    assert result.output("out") == {0: [10, 20, 2, 30]}
    assert result.output("counts") == {0: [1, 1, 2]}


class Deep(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        stream = app.get_input_stream("in")
        for _ in range(30):  # deeper than one compiled function may nest blocks
            stream = stream.filter(lambda m: m >= 0).flat_map(lambda m: [m + 1])
        stream.send_to(app.get_output_stream("out"))


def test_a_chain_nested_deeper_than_python_allows_in_one_function(tmp_path: Path) -> None:
    runner = app_runner(Deep, {"in": {0: [0, -1, 5]}})
    result = runner.run()
    assert result.output("out") == {0: [30, 35]}
