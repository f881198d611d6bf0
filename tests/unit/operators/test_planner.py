"""The planner: stages, intermediate streams and their producers, validation, and the jobs' configs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.config import Config
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.operators.application import describe_application
from samza_nb.operators.graph import ApplicationGraph
from samza_nb.operators.jobs import job_configs
from samza_nb.operators.plan import ApplicationPlan
from samza_nb.operators.planner import plan_application
from samza_nb.operators.stages import cut_stages
from samza_nb.systems.base import InProcessSystemFactory, SystemAdmin, SystemConsumer, SystemProducer
from samza_nb.systems.inmemory import InMemorySystemFactory

Describe = Callable[[StreamApplicationDescriptor], None]
X = "samza-nb-job-1-partition_by-by-key"  # the intermediate stream of partition_by "by-key"


class App(StreamApplication):
    def __init__(self, describe: Describe) -> None:
        self._describe = describe

    def describe(self, app: StreamApplicationDescriptor) -> None:
        self._describe(app)


def graph_of(describe: Describe, config: Config | None = None) -> ApplicationGraph:
    return describe_application(App(describe), config or Config({})).graph


def plan(
    describe: Describe, counts: dict[str, int], config: dict[str, Any] | None = None
) -> tuple[ApplicationGraph, ApplicationPlan, Config]:
    cfg = Config(config or {})
    graph = graph_of(describe, cfg)
    partition_counts = {SystemStream.parse(name): n for name, n in counts.items()}
    return graph, plan_application(graph, cfg, partition_counts), cfg


def repartition(app: StreamApplicationDescriptor) -> None:
    (
        app.get_input_stream("in")
        .map(lambda m: m, "double")
        .partition_by(lambda m: m, op_id="by-key")
        .sink(lambda m, c, k: None, "out")
    )


def two_inputs(app: StreamApplicationDescriptor) -> None:
    app.get_input_stream("a").partition_by(lambda m: m, op_id="by-key").sink(lambda m, c, k: None)
    app.get_input_stream("b").sink(lambda m, c, k: None)


# -- the plan -------------------------------------------------------------------------------------------
def test_an_intermediate_stream_has_the_largest_inputs_partitions_and_a_producer_per_task() -> None:
    _, result, _ = plan(repartition, {"log.in": 4})
    assert result.stage is None
    source, intermediate = result.streams["in"], result.streams[X]
    assert (source.system_stream, source.partitions, source.intermediate) == (
        SystemStream("log", "in"),
        4,
        False,
    )
    assert intermediate.system_stream == SystemStream("log", X)
    assert (intermediate.partitions, intermediate.intermediate, intermediate.producers) == (4, True, 4)
    assert result.stages == (frozenset({"in"}), frozenset({X}))


def test_configured_intermediate_partitions_and_systems_resolve_per_stream_id() -> None:
    config = {
        "job.intermediate.stream.partitions": 2,
        "job.default.system": "kafka",
        "streams.in.samza.system": "files",
        "streams.in.samza.physical.name": "clicks",
    }
    _, result, _ = plan(repartition, {"files.clicks": 3}, config)
    assert result.streams["in"].system_stream == SystemStream("files", "clicks")
    assert result.streams[X].system_stream == SystemStream("kafka", X)
    assert (result.streams[X].partitions, result.streams[X].producers) == (2, 3)


def test_producers_are_the_tasks_that_hold_a_stream_leading_to_the_partition_by() -> None:
    # a (2 partitions) leads to the partition_by, b (4) does not: of tasks Partition 0..3, two produce.
    _, result, _ = plan(two_inputs, {"log.a": 2, "log.b": 4})
    assert (result.streams[X].partitions, result.streams[X].producers) == (4, 2)
    _, by_ssp, _ = plan(
        two_inputs, {"log.a": 2, "log.b": 4}, {"job.systemstreampartition.grouper.factory": "group-by-ssp"}
    )
    assert by_ssp.streams[X].producers == 2
    _, split, _ = plan(two_inputs, {"log.a": 2, "log.b": 4}, {"app.split.jobs": True})
    assert split.streams[X].producers == 2


def test_a_broadcast_input_leading_to_the_partition_by_makes_every_task_a_producer() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("rules").merge(a.get_input_stream("in")).partition_by(lambda m: m, op_id="by-key")

    _, result, _ = plan(app, {"log.rules": 1, "log.in": 3}, {"task.broadcast.inputs": "log.rules#0"})
    assert result.streams[X].producers == 3


def test_outputs_are_in_the_plan_with_their_partitions_when_known() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("in").send_to(a.get_output_stream("out"))
        a.get_input_stream("other").send_to(a.get_output_stream("new"))

    _, result, _ = plan(app, {"log.in": 1, "log.other": 1, "log.out": 5})
    assert (result.streams["out"].output, result.streams["out"].partitions) == (True, 5)
    assert result.streams["new"].partitions == 0
    assert result.by_system_stream == {SystemStream("log", "in"): "in", SystemStream("log", "other"): "other"}


# -- stages ---------------------------------------------------------------------------------------------
def test_stages_are_cut_at_partition_by_and_ordered_upstream_first() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        late = a.get_input_stream("late")  # declared first, but downstream of nothing
        first = a.get_input_stream("first").partition_by(lambda m: m, op_id="p1")
        second = first.partition_by(lambda m: m, op_id="p2")
        second.merge(late, op_id="m").sink(lambda m, c, k: None, "s")

    graph = graph_of(app)
    stages = cut_stages(graph)
    p1, p2 = (f"samza-nb-job-1-partition_by-{op}" for op in ("p1", "p2"))
    assert stages.inputs == (("first",), (p1,), ("late", p2))
    assert stages.of_op["p1"] == 0 and stages.of_op["p2"] == 1 and stages.of_op["m"] == stages.of_op["s"] == 2


def test_stages_that_feed_each_other_are_one_stage() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        source = a.get_input_stream("in")
        once = source.partition_by(lambda m: m, op_id="p1")
        twice = once.partition_by(lambda m: m, op_id="p2")
        source.join(twice, lambda m: m, lambda m: m.key, lambda m, o: m, 1000, "j")

    stages = cut_stages(graph_of(app))
    p1, p2 = (f"samza-nb-job-1-partition_by-{op}" for op in ("p1", "p2"))
    assert stages.inputs == (("in", p1, p2),)


# -- validation -----------------------------------------------------------------------------------------
def test_an_input_whose_partitions_cannot_be_found_is_named() -> None:
    with pytest.raises(SamzaError, match=r"input stream 'in' \(log.in\): its partitions cannot be found"):
        plan(repartition, {})


def test_a_join_of_streams_with_different_partition_counts_names_the_op_and_streams() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("left").join(
            a.get_input_stream("right"), lambda m: m, lambda m: m, lambda m, o: m, 1000, "j"
        )

    with pytest.raises(
        SamzaError,
        match=r"join 'j' joins streams with different partition counts.*'left' \(2 .*'right' \(4",
    ):
        plan(app, {"log.left": 2, "log.right": 4})
    plan(app, {"log.left": 4, "log.right": 4})


def test_a_join_of_a_source_with_a_repartitioned_stream_needs_matching_counts() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        keyed = a.get_input_stream("big").partition_by(lambda m: m, op_id="by-key")
        a.get_input_stream("small").join(keyed, lambda m: m, lambda m: m.key, lambda m, o: m, 1000, "j")

    with pytest.raises(SamzaError, match=rf"join 'j'.*'{X}' \(8 partitions\)"):
        plan(app, {"log.big": 8, "log.small": 2})
    plan(app, {"log.big": 8, "log.small": 2}, {"job.intermediate.stream.partitions": 2})


def test_an_existing_intermediate_stream_with_another_partition_count_names_the_partition_by() -> None:
    with pytest.raises(
        SamzaError, match=rf"partition_by 'by-key': its intermediate stream log.{X} exists with 3"
    ):
        plan(repartition, {"log.in": 4, f"log.{X}": 3})
    _, result, _ = plan(repartition, {"log.in": 4, f"log.{X}": 4})
    assert result.streams[X].partitions == 4


def test_a_stream_read_and_written_is_refused_by_its_physical_name() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("in").send_to(a.get_output_stream("out"))

    with pytest.raises(SamzaError, match=r"stream 'out' \(log.in\) is used as both an input and an output"):
        plan(app, {"log.in": 1}, {"streams.out.samza.physical.name": "in"})


def test_two_stream_ids_of_one_input_stream_are_refused() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("a").merge(a.get_input_stream("b")).sink(lambda m, c, k: None)

    with pytest.raises(SamzaError, match=r"streams 'a' and 'b' of the application are both log.x"):
        plan(app, {"log.x": 1}, {"streams.a.samza.physical.name": "x", "streams.b.samza.physical.name": "x"})


def test_a_window_named_like_the_control_store_is_refused() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("in").window(
            Windows.tumbling(10, lambda: 0, lambda m, acc: acc + 1), "samza-control"
        )

    with pytest.raises(SamzaError, match="window op id 'samza-control' names the store"):
        plan(app, {"log.in": 1})


def test_duplicate_op_ids_are_refused_while_describing() -> None:
    def app(a: StreamApplicationDescriptor) -> None:
        a.get_input_stream("in").map(lambda m: m, "same").map(lambda m: m, "same")

    with pytest.raises(SamzaError, match="op id 'same' is used twice"):
        graph_of(app)


# -- job configs ----------------------------------------------------------------------------------------
def windowed(app: StreamApplicationDescriptor) -> None:
    (
        app.get_input_stream("in")
        .window(Windows.tumbling(5000, lambda: 0, lambda m, acc: acc + 1, time="processing"), "early")
        .partition_by(lambda m: m, op_id="by-key")
        .window(Windows.session(300, lambda: 0, lambda m, acc: acc + 1, time="processing"), "late")
        .send_to(app.get_output_stream("out"))
    )


def test_one_job_runs_the_whole_application() -> None:
    graph, result, config = plan(
        windowed, {"log.in": 2}, {"job.name": "clicks", "job.changelog.system": "kafka"}
    )
    (job,) = job_configs(graph, result, config)
    x = "clicks-1-partition_by-by-key"
    assert ApplicationPlan.from_config(job) == result
    assert job["app.name"] == job["job.name"] == "clicks" and job["app.id"] == "1"
    assert job.get_list("task.inputs") == ["log.in", f"log.{x}"]
    assert (job["streams.in.samza.system"], job["streams.in.samza.physical.name"]) == ("log", "in")
    assert (job[f"streams.{x}.samza.system"], job["streams.out.samza.physical.name"]) == ("log", "out")
    prefix = f"systems.log.streams.{x}"
    assert job[f"{prefix}.samza.offset.default"] == "oldest" and job[f"{prefix}.partitions"] == "2"
    # pickle by default: producer and consumer are the same application, and values arrive as sent
    assert job[f"{prefix}.samza.msg.serde"] == "samza_nb.control.serde.PickleIntermediateMessageSerde"
    assert job[f"{prefix}.samza.key.serde"] == "pickle"
    for store in ("early", "late"):
        assert job[f"stores.{store}.factory"] == "samza_nb.storage.duckdb.DuckDBStoreFactory"
        assert job[f"stores.{store}.key.serde"] == job[f"stores.{store}.msg.serde"] == "pickle"
        assert job[f"stores.{store}.changelog"] == f"kafka.clicks-1-{store}-changelog"
    assert (job["stores.samza-control.key.serde"], job["stores.samza-control.msg.serde"]) == (
        "string",
        "json",
    )
    assert job["stores.samza-control.changelog"] == "kafka.clicks-1-samza-control-changelog"
    assert job["task.window.ms"] == "300"
    assert job["task.commit.ms"] == "1000"  # intermediate messages on the durable log show at commits
    assert "app.stage" not in job


def test_split_jobs_are_named_per_stage_and_hold_their_own_ops() -> None:
    config = {"job.name": "clicks", "app.split.jobs": True, "job.changelog.system": "kafka"}
    graph, result, cfg = plan(windowed, {"log.in": 2}, config)
    first, second = job_configs(graph, result, cfg)
    x = "clicks-1-partition_by-by-key"
    assert (first["job.name"], second["job.name"]) == ("clicks-stage-0", "clicks-stage-1")
    assert first["app.name"] == second["app.name"] == "clicks"
    assert (first["app.stage"], second["app.stage"]) == ("0", "1")
    assert ApplicationPlan.from_config(second) == result.with_stage(1)
    assert first.get_list("task.inputs") == ["log.in"] and second.get_list("task.inputs") == [f"log.{x}"]
    assert first["systems.log.samza.factory"] == "samza_nb.systems.log.LogSystemFactory"
    assert "stores.early.factory" in first and "stores.late.factory" not in first
    assert "stores.late.factory" in second and "stores.early.factory" not in second
    # The intermediate stream's serdes on both sides; each job's control store has its own changelog.
    for job in (first, second):
        assert job[f"systems.log.streams.{x}.samza.msg.serde"].endswith("IntermediateMessageSerde")
    assert first["stores.samza-control.changelog"] == "kafka.clicks-stage-0-1-samza-control-changelog"
    assert second["stores.samza-control.changelog"] == "kafka.clicks-stage-1-1-samza-control-changelog"
    assert (first["task.window.ms"], second["task.window.ms"]) == ("1000", "300")


def test_app_stage_picks_one_stages_job_and_must_exist() -> None:
    graph, result, cfg = plan(windowed, {"log.in": 2}, {"app.stage": 1})
    (job,) = job_configs(graph, result, cfg)
    assert job["job.name"] == "samza-nb-job-stage-1"
    with pytest.raises(ConfigError, match=r"app.stage=2: the application has 2 stage\(s\)") as info:
        plan(windowed, {"log.in": 2}, {"app.stage": 2})
    assert info.value.key == "app.stage"


def test_keys_the_user_set_are_kept() -> None:
    config = {
        "task.window.ms": -1,
        "stores.early.key.serde": "string",
        "systems.log.streams.samza-nb-job-1-partition_by-by-key.samza.offset.default": "newest",
        "app.intermediate.serde": "json",
        "task.commit.ms": 60000,
    }
    graph, result, cfg = plan(windowed, {"log.in": 2}, config)
    (job,) = job_configs(graph, result, cfg)
    prefix = "systems.log.streams.samza-nb-job-1-partition_by-by-key"
    assert job["task.window.ms"] == "-1" and job["stores.early.key.serde"] == "string"
    assert job["task.commit.ms"] == "60000"
    assert job[f"{prefix}.samza.offset.default"] == "newest"
    assert job[f"{prefix}.samza.msg.serde"] == "samza_nb.control.serde.IntermediateMessageSerde"
    assert job[f"{prefix}.samza.key.serde"] == "json"
    assert "stores.early.changelog" not in job  # no job.changelog.system


def test_in_memory_intermediate_streams_carry_objects_without_serdes() -> None:
    config = {
        "job.default.system": "mem",
        "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
    }
    graph, result, cfg = plan(repartition, {"mem.in": 1}, config)
    (job,) = job_configs(graph, result, cfg)
    assert not [key for key in job if key.endswith(("msg.serde", "key.serde")) and key.startswith("systems.")]
    assert "task.window.ms" not in job


class ObjectsHere:
    """A system factory of its own (not the in-memory one's subclass) that declares its streams in-process."""

    def namespace(self, system_name: str, config: Config) -> str:
        return system_name

    def get_admin(self, system_name: str, config: Config) -> SystemAdmin:
        return InMemorySystemFactory().get_admin(system_name, config)

    def get_consumer(self, system_name: str, config: Config) -> SystemConsumer:
        return InMemorySystemFactory().get_consumer(system_name, config)

    def get_producer(self, system_name: str, config: Config) -> SystemProducer:
        return InMemorySystemFactory().get_producer(system_name, config)


def test_a_system_declaring_in_process_streams_carries_objects_and_others_carry_bytes() -> None:
    assert isinstance(ObjectsHere(), InProcessSystemFactory)
    cases = ((f"{__name__}.ObjectsHere", False), ("samza_nb.systems.log.LogSystemFactory", True))
    for factory, carries_bytes in cases:
        config = {"job.default.system": "sys", "systems.sys.samza.factory": factory}
        graph, result, cfg = plan(repartition, {"sys.in": 1}, config)
        (job,) = job_configs(graph, result, cfg)
        serdes = [key for key in job if key.endswith("msg.serde") and key.startswith("systems.sys.")]
        assert bool(serdes) is carries_bytes, factory
