"""The config of each job that runs a planned application.

One job runs the whole application; with ``app.split.jobs = true`` one job per stage runs (``app.stage =
N``: only stage N's). A stage's job is named ``<app.name>-stage-<N>`` (job.id stays the application's), so
its checkpoints, state files and coordinator stream are its own; ``app.name`` / ``app.id`` keep the
application's names, which name the intermediate streams every job shares.

Each job's config is the application's config plus what the planner decided. Keys the user set are kept;
the planner always writes ``app.plan``, ``task.inputs`` and, for a stage's job, ``job.name`` and
``app.stage``. It writes when unset:

- ``app.name``, ``app.id``; ``streams.<id>.samza.system`` / ``.samza.physical.name`` of every stream;
  ``systems.log.samza.factory`` (the durable log) when a stream lives on ``log`` (a job that only writes
  to a system still needs its factory);
- per intermediate stream the job reads or writes: ``systems.<s>.streams.<name>.samza.offset.default =
  oldest`` and ``.partitions``; on a system that carries bytes (any but the in-memory one) the
  intermediate message serde (``app.intermediate.serde``: json or pickle) and key serde;
- per window or join op of the job, its DuckDB store ``stores.<op_id>.*`` (pickle serdes), and the store
  ``samza-control`` (string keys, JSON values) that keeps the end-of-stream and watermark bookkeeping;
  with ``job.changelog.system`` set, their changelogs: ``<app.name>-<app.id>-<op_id>-changelog``, and for
  the control store ``<job.name>-<job.id>-samza-control-changelog`` (a split application's jobs have
  tasks of the same names, so each job's control store needs its own changelog);
- ``task.window.ms`` when the job has processing-time windows (the smallest window size, at most 1000)
  or joins (1000: they purge entries by processing time on the timer while no watermark came);
- ``task.max.concurrency = 1``: an operator task runs one message at a time (its operators keep state
  between messages); another value is a ConfigError;
- ``task.commit.ms = 1000``: what a task sends to the durable log becomes visible to its consumers when it
  commits, so an intermediate stream's messages (and its end-of-stream) would otherwise wait for the
  default one-minute commit.
"""

from __future__ import annotations

from typing import Any, Final

from samza_nb.config import Config
from samza_nb.config.catalogue import job_id, job_name
from samza_nb.config.plugins import import_dotted
from samza_nb.config.system_defaults import DEFAULT_LOG_SYSTEM
from samza_nb.errors import ConfigError
from samza_nb.operators.graph import ApplicationGraph, JoinSpec, OperatorSpec, PartitionBySpec, WindowSpec
from samza_nb.operators.plan import (
    APP_ID_KEY,
    APP_NAME_KEY,
    APP_PLAN_KEY,
    APP_STAGE_KEY,
    CONTROL_STORE,
    ApplicationPlan,
)
from samza_nb.operators.planner import (
    application_identity,
    jobs_to_run,
    stream_physical_key,
    stream_system_key,
)
from samza_nb.operators.stages import cut_stages
from samza_nb.operators.windows import TimeCharacteristic
from samza_nb.systems.base import InProcessSystemFactory

LOG_FACTORY: Final = "samza_nb.systems.log.LogSystemFactory"
"""The durable log's system factory."""

STORE_FACTORY: Final = "samza_nb.storage.duckdb.DuckDBStoreFactory"
"""The store of window and join state, and of the control bookkeeping."""

INTERMEDIATE_SERDES: Final = {
    "json": ("samza_nb.control.serde.IntermediateMessageSerde", "json"),
    "pickle": ("samza_nb.control.serde.PickleIntermediateMessageSerde", "pickle"),
}
"""``app.intermediate.serde`` -> (message serde, key serde) of intermediate streams on byte systems."""

MAX_PROCESSING_WINDOW_TIMER_MS: Final = 1000
"""The longest ``task.window.ms`` the planner sets (for processing-time windows and joins)."""

APPLICATION_COMMIT_MS: Final = 1000
"""``task.commit.ms`` of an application's jobs unless set."""


def stage_job_name(app_name: str, stage: int) -> str:
    """The job.name of stage ``stage``'s job of a split application."""
    return f"{app_name}-stage-{stage}"


def job_configs(graph: ApplicationGraph, plan: ApplicationPlan, config: Config) -> tuple[Config, ...]:
    """The config of every job to run (see the module): one, or one per stage in stage order."""
    stages = jobs_to_run(config, len(plan.stages))
    if stages is None:
        return (_job_config(graph, plan, config, None),)
    return tuple(_job_config(graph, plan.with_stage(stage), config, stage) for stage in stages)


def _job_config(graph: ApplicationGraph, plan: ApplicationPlan, config: Config, stage: int | None) -> Config:
    values: dict[str, Any] = dict(config)

    def default(key: str, value: object) -> None:
        values.setdefault(key, value)

    app_name, app_id = application_identity(config)
    values[APP_PLAN_KEY] = plan.to_json()
    default(APP_NAME_KEY, app_name)
    default(APP_ID_KEY, app_id)
    if stage is not None:
        values["job.name"] = stage_job_name(app_name, stage)
        values[APP_STAGE_KEY] = stage

    of_op = cut_stages(graph).of_op
    ops = [op for op in graph.operators if stage is None or of_op[op.op_id] == stage]
    reads = [sid for sid in graph.inputs if sid in plan.inputs_of_job()]
    values["task.inputs"] = ",".join(str(plan.streams[sid].system_stream) for sid in reads)
    for stream in plan.streams.values():
        default(stream_system_key(stream.stream_id), stream.system_stream.system)
        default(stream_physical_key(stream.stream_id), stream.system_stream.stream)
        if stream.system_stream.system == DEFAULT_LOG_SYSTEM:
            default(f"systems.{DEFAULT_LOG_SYSTEM}.samza.factory", LOG_FACTORY)

    writes = [op.stream_id for op in ops if isinstance(op, PartitionBySpec)]
    serde, key_serde = INTERMEDIATE_SERDES[config.value("app.intermediate.serde")]
    for sid in dict.fromkeys([*(s for s in reads if plan.streams[s].intermediate), *writes]):
        stream = plan.streams[sid]
        prefix = f"systems.{stream.system_stream.system}.streams.{stream.system_stream.stream}"
        default(f"{prefix}.samza.offset.default", "oldest")
        default(f"{prefix}.partitions", stream.partitions)
        if _carries_bytes(config, stream.system_stream.system):
            default(f"{prefix}.samza.msg.serde", serde)
            default(f"{prefix}.samza.key.serde", key_serde)

    changelog_system = (config.get_str("job.changelog.system") or "").strip()
    for op in ops:
        if isinstance(op, (WindowSpec, JoinSpec)):
            changelog = f"{app_name}-{app_id}-{op.op_id}-changelog"
            _store(values, op.op_id, "pickle", "pickle", changelog_system, changelog)
    control_changelog = f"{job_name(values)}-{job_id(values)}-{CONTROL_STORE}-changelog"
    _store(values, CONTROL_STORE, "string", "json", changelog_system, control_changelog)

    default("task.commit.ms", APPLICATION_COMMIT_MS)
    if config.get_int("task.max.concurrency", 1) != 1:
        raise ConfigError(
            f"task.max.concurrency={config['task.max.concurrency']}: an application's operator task takes "
            "one message at a time (its windows and joins keep state between messages); leave it at 1 (a "
            "thread pool, job.container.thread.pool.size, still runs tasks in parallel)",
            key="task.max.concurrency",
        )
    if "task.window.ms" not in config:
        timers = _processing_window_sizes(ops)
        if any(isinstance(op, JoinSpec) for op in ops):
            timers.append(MAX_PROCESSING_WINDOW_TIMER_MS)
        if timers:
            values["task.window.ms"] = min(min(timers), MAX_PROCESSING_WINDOW_TIMER_MS)
    return Config(values)


def _store(
    values: dict[str, Any], name: str, key_serde: str, msg_serde: str, changelog_system: str, changelog: str
) -> None:
    values.setdefault(f"stores.{name}.factory", STORE_FACTORY)
    values.setdefault(f"stores.{name}.key.serde", key_serde)
    values.setdefault(f"stores.{name}.msg.serde", msg_serde)
    if changelog_system:
        values.setdefault(f"stores.{name}.changelog", f"{changelog_system}.{changelog}")


def _processing_window_sizes(ops: list[OperatorSpec]) -> list[int]:
    return [
        op.window.size_ms
        for op in ops
        if isinstance(op, WindowSpec)
        and op.window is not None
        and op.window.time is TimeCharacteristic.PROCESSING
    ]


def _carries_bytes(config: Config, system: str) -> bool:
    """False for a system whose factory is an :class:`InProcessSystemFactory` (the in-memory system: it
    passes Python objects through), True for the others (the durable log, Kafka: they carry bytes, so
    intermediate streams need the intermediate message serde)."""
    key = f"systems.{system}.samza.factory"
    path = (config.get_str(key) or "").strip()
    if not path:
        return True
    try:
        factory = import_dotted(path, key)
    except ConfigError:
        return True  # the container names the bad factory when it starts
    factory_class = factory if isinstance(factory, type) else type(factory)
    return not issubclass(factory_class, InProcessSystemFactory)


__all__ = ["INTERMEDIATE_SERDES", "STORE_FACTORY", "job_configs", "stage_job_name"]
