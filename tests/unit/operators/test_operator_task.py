"""StreamOperatorTask at init and at the edges: what partition_by sends, and the errors that name what
is wrong (a plan for another application, a missing store, a store holding another operator's state)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.api.task import TaskContext
from samza_nb.config import Config
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.observe.events import WatermarkAdvanced
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.operators.plan import ApplicationPlan
from samza_nb.operators.task import operator_task_factory
from tests.unit.operators.harness import JOB, Driver, app_config, plan_for

IN = SystemStreamPartition("test", "in", 0)
MIDDLE = SystemStream("test", "test-job-1-partition_by-p")


class ByKey(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        app.get_input_stream("in").partition_by(lambda m: m[0], lambda m: m[1], "p").sink(
            lambda kv, collector, coordinator: None
        )


def test_partition_by_sends_key_value_and_time_and_none_keys_to_partition_0(tmp_path: Path) -> None:
    d = Driver(ByKey, plan_for(ByKey, {"in": 3}), "Partition 0", [IN], tmp_path)
    d.message(IN, ("k", "v"), 5)
    d.message(IN, (None, "w"), None)
    sent = d.take()
    assert [(e.system_stream, e.message, e.key, e.partition_key, e.partition, e.timestamp) for e in sent] == [
        (MIDDLE, "v", "k", "k", None, 5),
        (MIDDLE, "w", None, None, 0, None),
    ]


def test_an_intermediate_message_arrives_as_key_value(tmp_path: Path) -> None:
    seen: list[Any] = []

    class Seeing(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            app.get_input_stream("in").partition_by(lambda m: m, op_id="p").sink(
                lambda kv, collector, coordinator: seen.append(kv)
            )

    middle = SystemStreamPartition("test", MIDDLE.stream, 0)
    d = Driver(Seeing, plan_for(Seeing, {"in": 1}), "Partition 0", [IN, middle], tmp_path)
    d.message(middle, "value", 7, key="key")
    assert seen == [("key", "value")] and type(seen[0]).__name__ == "KV"


def test_restored_watermarks_are_published_again_at_the_first_call(tmp_path: Path) -> None:
    d = Driver(ByKey, plan_for(ByKey, {"in": 1}), "Partition 0", [IN], tmp_path)
    d.watermark(IN, 40)
    assert [(e.ssp, e.watermark) for e in d.events if isinstance(e, WatermarkAdvanced)] == [(IN, 40)]
    d.restart()
    d.message(IN, ("k", "v"), 41)
    assert [(e.ssp, e.watermark) for e in d.events if isinstance(e, WatermarkAdvanced)] == [
        (IN, 40),
        (None, 40),
    ]


def context(app: Any, plan: ApplicationPlan, tmp_path: Path, stores: dict[str, Any]) -> TaskContext:
    config = Config({"job.name": JOB, **app_config(app, plan, tmp_path)})
    return TaskContext("Partition 0", frozenset([IN]), config, stores)


def test_a_plan_for_another_application_is_a_config_error(tmp_path: Path) -> None:
    plan = plan_for(ByKey, {"other": 1})
    task = operator_task_factory(ByKey)()
    with pytest.raises(ConfigError, match="other"):
        task.init(context(ByKey, plan, tmp_path, {}))


def test_an_intermediate_stream_without_producers_is_a_config_error(tmp_path: Path) -> None:
    plan = plan_for(ByKey, {"in": 1})
    streams = dict(plan.streams)
    streams[MIDDLE.stream] = replace(streams[MIDDLE.stream], producers=0)
    bad = ApplicationPlan(streams, plan.stages)
    middle = SystemStreamPartition("test", MIDDLE.stream, 0)
    config = Config({"job.name": JOB, **app_config(ByKey, bad, tmp_path)})
    task = operator_task_factory(ByKey)()
    with pytest.raises(ConfigError, match="0 producers"):
        task.init(TaskContext("Partition 0", frozenset([IN, middle]), config, {}))


def test_a_missing_control_store_is_named(tmp_path: Path) -> None:
    task = operator_task_factory(ByKey)()
    with pytest.raises(SamzaError, match="samza-control"):
        task.init(context(ByKey, plan_for(ByKey, {"in": 1}), tmp_path, {}))


class Counted(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        app.get_input_stream("in").window(Windows.tumbling(10, lambda: 0, lambda m, n: n + 1), "shared").sink(
            lambda pane, collector, coordinator: None
        )


class Joined(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        s = app.get_input_stream("in")
        s.join(s, lambda m: m, lambda m: m, lambda a, b: a, 5, "shared").sink(lambda m, c, k: None)


def test_a_store_holding_another_operators_state_is_named(tmp_path: Path) -> None:
    d = Driver(Joined, plan_for(Joined, {"in": 1}), "Partition 0", [IN], tmp_path)
    d.message(IN, "x", 1)
    d.commit()
    d.close()
    with pytest.raises(SamzaError, match="store 'shared' holds .* not the state of a tumbling window"):
        Driver(Counted, plan_for(Counted, {"in": 1}), "Partition 0", [IN], tmp_path)


def test_a_traceback_through_a_compiled_chain_shows_its_lines(tmp_path: Path) -> None:
    import traceback

    class Failing(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            app.get_input_stream("in").map(lambda m: 1 // m).sink(lambda m, c, k: None)

    d = Driver(Failing, plan_for(Failing, {"in": 1}), "Partition 0", [IN], tmp_path)
    d.message(IN, 1)
    with pytest.raises(ZeroDivisionError) as failure:
        d.message(IN, 0)
    text = "".join(traceback.format_exception(failure.value))
    assert re.search(
        r"File \"<samza_nb operators process #\d+>\", line \d+, in process\n +\w+ = \w+_map\(m\)\n", text
    ), text
