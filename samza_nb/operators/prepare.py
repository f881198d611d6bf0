"""Preparing an application to run: describe it, ask the systems how many partitions its streams have,
plan it, create its intermediate streams, and hand back the jobs' configs and the task factory.

Every runner (TestRunner, LocalJobRunner, ``samza-nb run``, the notebook) prepares an application once,
before any job of it starts; the containers of its jobs then only read the plan from their config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from samza_nb.api.streams import SystemStream
from samza_nb.config import Config
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.operators.application import describe_application
from samza_nb.operators.graph import ApplicationGraph
from samza_nb.operators.jobs import job_configs
from samza_nb.operators.plan import ApplicationPlan
from samza_nb.operators.planner import plan_application, resolve_stream
from samza_nb.operators.task import operator_task_factory
from samza_nb.systems.base import SystemAdmin
from samza_nb.systems.registry import system_factory


@dataclass(frozen=True)
class PreparedApplication:
    """A planned application: its plan, the config of each job to run (one, or one per stage in stage
    order), its graph, and the factory of the operator task every job's tasks run."""

    plan: ApplicationPlan
    jobs: tuple[Config, ...]
    graph: ApplicationGraph
    task_factory: Callable[[], Any]


async def prepare_application(app: Any, config: Config) -> PreparedApplication:
    """Prepare ``app`` (a StreamApplication class or instance) under ``config`` (see the module). A
    SamzaError naming the stream or op when a stream cannot be found or the graph cannot run; nothing is
    created then."""
    graph = describe_application(app, config).graph
    admins = _Admins(config)
    counts: dict[SystemStream, int] = {}
    for spec in graph.source_inputs():
        stream = resolve_stream(config, spec.stream_id)
        counts[stream] = await admins.partitions(stream, spec.stream_id)
    for sid in [*(spec.stream_id for spec in graph.intermediate_inputs()), *graph.outputs]:
        stream = resolve_stream(config, sid)
        existing = await admins.existing_partitions(stream)
        if existing is not None:
            counts[stream] = existing
    plan = plan_application(graph, config, counts)
    jobs = job_configs(graph, plan, config)
    await create_intermediate_streams(plan, admins.admin)
    return PreparedApplication(plan, jobs, graph, operator_task_factory(app))


async def create_intermediate_streams(plan: ApplicationPlan, admin_of: Callable[[str], SystemAdmin]) -> None:
    """Create every intermediate stream of ``plan`` that does not exist yet."""
    for stream in plan.streams.values():
        if stream.intermediate:
            ss = stream.system_stream
            await admin_of(ss.system).create_stream(ss.stream, stream.partitions)


class _Admins:
    """The admins of the systems an application names, made on first use."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._admins: dict[str, SystemAdmin] = {}

    def admin(self, system: str) -> SystemAdmin:
        admin = self._admins.get(system)
        if admin is None:
            admin = system_factory(self._config, system).get_admin(system, self._config)
            self._admins[system] = admin
        return admin

    async def partitions(self, stream: SystemStream, stream_id: str) -> int:
        """The partition count of input ``stream``; its system's error, naming the stream id, when it
        cannot say."""
        try:
            metadata = await self.admin(stream.system).get_metadata([stream.stream])
        except ConfigError as exc:
            raise ConfigError(f"input stream {stream_id!r} ({stream}): {exc}", key=exc.key) from None
        except SamzaError as exc:
            raise SamzaError(f"input stream {stream_id!r} ({stream}): {exc}") from None
        return len(_partitions_of(metadata, stream.stream))

    async def existing_partitions(self, stream: SystemStream) -> int | None:
        """The partition count of ``stream``, or None when its system does not have it (or cannot say)."""
        try:
            metadata = await self.admin(stream.system).get_metadata([stream.stream])
        except SamzaError:
            return None
        return len(_partitions_of(metadata, stream.stream)) or None


def _partitions_of(metadata: Mapping[str, Mapping[int, Any]], stream: str) -> list[int]:
    return list(metadata.get(stream, {}))


__all__ = [
    "PreparedApplication",
    "create_intermediate_streams",
    "prepare_application",
]
