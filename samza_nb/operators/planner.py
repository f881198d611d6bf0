"""The planner: an application's graph, its config and the partition counts of its streams become an
:class:`~.plan.ApplicationPlan` (:func:`plan_application`), and the plan the config of each job that runs
it (:func:`~.jobs.job_configs`). Pure: it asks no system anything (:mod:`.prepare` does that first).

What it decides:

- Where each stream lives: stream id ``<id>`` is ``streams.<id>.samza.system`` (else
  ``job.default.system``, else the durable log ``log``) and ``streams.<id>.samza.physical.name`` (else the
  id itself). Intermediate streams resolve the same way, so they live on the default system.
- Intermediate partition counts: ``job.intermediate.stream.partitions``, else the largest source input's.
- Stages (:mod:`.stages`) and, per intermediate stream, its producers: the tasks that hold a partition of a
  stream leading to its partition_by, when the inputs of the job running that partition_by (the whole
  application, or its stage's job when split) are grouped into tasks by the job's grouper.
- Validation, before anything runs; each error names the op or stream: a stream both read and written,
  two stream ids naming one input stream, an input whose partitions cannot be found, a join whose inputs
  have different partition counts, a partition_by whose intermediate stream already exists with another
  partition count, a window or join op id that is the name of the control store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.config import Config
from samza_nb.config.catalogue import job_id, job_name
from samza_nb.config.system_defaults import default_system
from samza_nb.coordinator.grouper import grouper_for
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.operators.graph import ApplicationGraph, JoinSpec, PartitionBySpec, WindowSpec
from samza_nb.operators.plan import (
    APP_ID_KEY,
    APP_NAME_KEY,
    APP_SPLIT_KEY,
    APP_STAGE_KEY,
    CONTROL_STORE,
    ApplicationPlan,
    StreamPlan,
)
from samza_nb.operators.stages import Stages, cut_stages

INTERMEDIATE_PARTITIONS_KEY = "job.intermediate.stream.partitions"


def stream_system_key(stream_id: str) -> str:
    """``streams.<id>.samza.system``."""
    return f"streams.{stream_id}.samza.system"


def stream_physical_key(stream_id: str) -> str:
    """``streams.<id>.samza.physical.name``."""
    return f"streams.{stream_id}.samza.physical.name"


def resolve_stream(config: Config, stream_id: str) -> SystemStream:
    """Where stream id ``stream_id`` lives (see the module)."""
    system = (config.get_str(stream_system_key(stream_id)) or "").strip() or default_system(config)
    physical = (config.get_str(stream_physical_key(stream_id)) or "").strip() or stream_id
    return SystemStream(system, physical)


def application_identity(config: Config) -> tuple[str, str]:
    """The application's name and id: ``app.name`` / ``app.id``, else ``job.name`` / ``job.id``."""
    name = (config.get_str(APP_NAME_KEY) or "").strip() or job_name(config)
    ident = (config.get_str(APP_ID_KEY) or "").strip() or job_id(config)
    return name, ident


def jobs_to_run(config: Config, stage_count: int) -> tuple[int, ...] | None:
    """None: one job runs the whole application; else the stages whose jobs run (``app.stage`` alone, or
    every stage with ``app.split.jobs = true``). A stage that does not exist is a ConfigError naming
    ``app.stage``."""
    stage = config.value(APP_STAGE_KEY)
    if stage is not None:
        if stage >= stage_count:
            raise ConfigError(
                f"{APP_STAGE_KEY}={stage}: the application has {stage_count} stage(s), 0..{stage_count - 1}",
                key=APP_STAGE_KEY,
            )
        return (stage,)
    if config.value(APP_SPLIT_KEY):
        return tuple(range(stage_count))
    return None


def plan_application(
    graph: ApplicationGraph, config: Config, partition_counts: Mapping[SystemStream, int]
) -> ApplicationPlan:
    """The plan of ``graph`` under ``config`` (``stage`` None): ``partition_counts`` has the partition count
    of every source input, and of every intermediate or output stream that already exists. A SamzaError
    naming the op or stream when the graph cannot run (see the module)."""
    stages = cut_stages(graph)
    split = jobs_to_run(config, len(stages.inputs)) is not None
    where = {sid: resolve_stream(config, sid) for sid in [*graph.inputs, *graph.outputs]}
    _check_streams_apart(graph, where)
    _check_store_names(graph)

    counts: dict[str, int] = {}
    for spec in graph.source_inputs():
        count = partition_counts.get(where[spec.stream_id], 0)
        if count < 1:
            raise SamzaError(
                f"input stream {spec.stream_id!r} ({where[spec.stream_id]}): its partitions cannot be found "
                f"(does the stream exist? set {stream_system_key(spec.stream_id)} / "
                f"{stream_physical_key(spec.stream_id)} if it lives elsewhere)"
            )
        counts[spec.stream_id] = count
    intermediate_count = _intermediate_partitions(config, counts.values())
    for spec in graph.intermediate_inputs():
        existing = partition_counts.get(where[spec.stream_id])
        if existing is not None and existing != intermediate_count:
            op = spec.source.op_id if spec.source is not None else spec.op_id
            raise SamzaError(
                f"partition_by {op!r}: its intermediate stream {where[spec.stream_id]} exists with "
                f"{existing} partitions, but the plan gives it {intermediate_count} (set "
                f"{INTERMEDIATE_PARTITIONS_KEY} = {existing}, or delete the stream)"
            )
        counts[spec.stream_id] = intermediate_count
    _check_joins(graph, counts)
    _check_join_grouping(graph, config, where, counts)

    producers = _producers(graph, config, stages, split, where, counts)
    streams: dict[str, StreamPlan] = {}
    for sid, spec in graph.inputs.items():
        streams[sid] = StreamPlan(
            sid, where[sid], counts[sid], spec.intermediate, producers.get(sid, 0) if spec.intermediate else 0
        )
    for sid in graph.outputs:
        streams[sid] = StreamPlan(sid, where[sid], partition_counts.get(where[sid], 0), output=True)
    return ApplicationPlan(streams, tuple(frozenset(ids) for ids in stages.inputs), None)


def _intermediate_partitions(config: Config, source_counts: Iterable[int]) -> int:
    configured = config.value(INTERMEDIATE_PARTITIONS_KEY)
    if configured is not None:
        return int(configured)
    return max(source_counts)


def _check_streams_apart(graph: ApplicationGraph, where: Mapping[str, SystemStream]) -> None:
    """No stream is both read and written, and no two stream ids read the same stream."""
    read: dict[SystemStream, str] = {}
    for sid in graph.inputs:
        other = read.setdefault(where[sid], sid)
        if other != sid:
            raise SamzaError(
                f"streams {other!r} and {sid!r} of the application are both {where[sid]}: an input stream "
                "can be read once (use one stream id)"
            )
    for sid in graph.outputs:
        reader = read.get(where[sid])
        if reader is not None:
            what = "read" if reader == sid else f"read as {reader!r}"
            raise SamzaError(
                f"stream {sid!r} ({where[sid]}) is used as both an input and an output of the application "
                f"(it is {what})"
            )


def _check_store_names(graph: ApplicationGraph) -> None:
    for op in graph.operators:
        if isinstance(op, (WindowSpec, JoinSpec)) and op.op_id == CONTROL_STORE:
            raise SamzaError(
                f"{op.kind.value} op id {op.op_id!r} names the store that keeps the end-of-stream and "
                "watermark bookkeeping: choose another op id"
            )


def _check_joins(graph: ApplicationGraph, counts: Mapping[str, int]) -> None:
    """Both sides of a join (every input leading to either) have one partition count: a partition of one
    side meets the same partition of the other in one task."""
    for op in graph.operators:
        if not isinstance(op, JoinSpec):
            continue
        sides = [sorted(graph.upstream_inputs(side)) for side in op.prev]
        found = {counts[sid] for side in sides for sid in side}
        if len(found) > 1:
            described = "; ".join(
                f"{name} side: " + ", ".join(f"{sid!r} ({counts[sid]} partitions)" for sid in side)
                for name, side in zip(("left", "right"), sides, strict=False)
            )
            raise SamzaError(
                f"join {op.op_id!r} joins streams with different partition counts ({described}): partition "
                f"both sides by the join key (partition_by), or give the inputs one partition count"
            )


def _check_join_grouping(
    graph: ApplicationGraph, config: Config, where: Mapping[str, SystemStream], counts: Mapping[str, int]
) -> None:
    """The grouper puts partition n of every input of a join's two sides into one task (group-by-partition
    does; group-by-ssp gives each partition a task of its own, and the sides would never meet)."""
    grouper = grouper_for(config)
    for op in graph.operators:
        if not isinstance(op, JoinSpec):
            continue
        inputs = sorted(set().union(*(graph.upstream_inputs(side) for side in op.prev)))
        if len(inputs) < 2:
            continue
        ssps = [
            SystemStreamPartition(where[sid].system, where[sid].stream, p)
            for sid in inputs
            for p in range(counts[sid])
        ]
        task_of = {ssp: task for task, group in grouper.group(ssps).items() for ssp in group}
        for partition in range(max(counts[sid] for sid in inputs)):
            tasks = {task_of[s] for s in ssps if s.partition == partition}
            if len(tasks) > 1:
                raise SamzaError(
                    f"join {op.op_id!r}: the grouper (job.systemstreampartition.grouper.factory) puts "
                    f"partition {partition} of its inputs {', '.join(repr(i) for i in inputs)} into "
                    f"different tasks ({', '.join(sorted(tasks))}), where the two sides never meet: use "
                    "group-by-partition"
                )


def _producers(
    graph: ApplicationGraph,
    config: Config,
    stages: Stages,
    split: bool,
    where: Mapping[str, SystemStream],
    counts: Mapping[str, int],
) -> dict[str, int]:
    """Intermediate stream id -> how many tasks produce to it (see the module)."""
    jobs = stages.inputs if split else (tuple(sid for ids in stages.inputs for sid in ids),)
    grouper = grouper_for(config)
    groupings = [
        list(
            grouper.group(
                SystemStreamPartition(where[sid].system, where[sid].stream, p)
                for sid in ids
                for p in range(counts[sid])
            ).values()
        )
        for ids in jobs
    ]
    result: dict[str, int] = {}
    for spec in graph.intermediate_inputs():
        source = spec.source
        assert isinstance(source, PartitionBySpec)
        tasks = groupings[stages.of_op[source.op_id] if split else 0]
        upstream = {where[sid] for sid in graph.upstream_inputs(source)}
        result[spec.stream_id] = sum(
            1 for ssps in tasks if any(SystemStream(s.system, s.stream) in upstream for s in ssps)
        )
    return result


__all__ = [
    "INTERMEDIATE_PARTITIONS_KEY",
    "application_identity",
    "jobs_to_run",
    "plan_application",
    "resolve_stream",
    "stream_physical_key",
    "stream_system_key",
]
