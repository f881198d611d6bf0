"""A job's inputs as its config names them, the systems it configures, what they say of their partitions,
and the partitions a container's part of the job model reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.systems.base import FeedingSystemAdmin

if TYPE_CHECKING:
    from samza_nb.api.job_model import ContainerModel, JobModel, TaskModel
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemAdmin


def input_streams(config: Config) -> list[SystemStream]:
    """The job's inputs from ``task.inputs``; a ConfigError naming the key when missing or malformed."""
    raw = config.get_list("task.inputs")
    if not raw:
        raise ConfigError(
            "missing required config task.inputs (e.g. task.inputs = kafka.page-views)", key="task.inputs"
        )
    streams = []
    for item in raw:
        system, sep, stream = item.partition(".")
        if not sep or not system or not stream:
            raise ConfigError(
                f"task.inputs={config['task.inputs']!r}: {item!r} is not of the form <system>.<stream>",
                key="task.inputs",
            )
        streams.append(SystemStream(system, stream))
    return list(dict.fromkeys(streams))


def configured_systems(config: Config) -> list[str]:
    """Every system with a ``systems.<name>.samza.factory``."""
    names = []
    for key in config:
        if key.startswith("systems.") and key.endswith(".samza.factory"):
            names.append(key[len("systems.") : -len(".samza.factory")])
    return sorted(set(names))


async def input_metadata(
    inputs: list[SystemStream], admins: Mapping[str, SystemAdmin]
) -> dict[SystemStreamPartition, SSPMetadata]:
    """The metadata of every partition of ``inputs``, asked of their systems' admins."""
    by_system: dict[str, list[str]] = {}
    for input_stream in inputs:
        by_system.setdefault(input_stream.system, []).append(input_stream.stream)
    result: dict[SystemStreamPartition, SSPMetadata] = {}
    for system, names in by_system.items():
        metadata = await admins[system].get_metadata(names)
        for stream, partitions in metadata.items():
            for partition, meta in partitions.items():
                result[SystemStreamPartition(system, stream, partition)] = meta
    return result


async def head_offsets(
    partitions: Iterable[SystemStreamPartition], admins: Mapping[str, SystemAdmin]
) -> dict[SystemStreamPartition, str | None]:
    """The newest offset of every partition of the streams of ``partitions``, asked of their systems'
    admins now (a system without an admin here is left out)."""
    by_system: dict[str, set[str]] = {}
    for ssp in partitions:
        by_system.setdefault(ssp.system, set()).add(ssp.stream)
    result: dict[SystemStreamPartition, str | None] = {}
    for system, streams in by_system.items():
        admin = admins.get(system)
        if admin is None:
            continue
        for stream, metas in (await admin.get_metadata(sorted(streams))).items():
            for partition, meta in metas.items():
                result[SystemStreamPartition(system, stream, partition)] = meta.newest
    return result


async def start_feeding(
    admins: Mapping[str, SystemAdmin], inputs: list[SystemStream], started: list[str]
) -> None:
    """Start the feeds of the inputs whose admin feeds its streams (``FeedingSystemAdmin``); called by
    whoever planned the job model, after planning. Appends to ``started`` each system it starts (before
    starting it), for :func:`stop_feeding`."""
    for system, admin in sorted(admins.items()):
        if isinstance(admin, FeedingSystemAdmin):
            streams = sorted({s.stream for s in inputs if s.system == system})
            if streams:
                started.append(system)
                await admin.start_feeding(streams)


async def stop_feeding(admins: Mapping[str, SystemAdmin], systems: list[str]) -> None:
    """Stop the feeds :func:`start_feeding` started (every system tried; the first error raised)."""
    first: BaseException | None = None
    for system in systems:
        admin = admins.get(system)
        if isinstance(admin, FeedingSystemAdmin):
            try:
                await admin.stop_feeding()
            except Exception as exc:
                first = first or exc
    if first is not None:
        raise first


def refuse_shared_partitions(tasks: Mapping[str, TaskModel]) -> None:
    """The run loop delivers each input partition to one task: a partition several tasks read (a broadcast
    input) is a ConfigError until it delivers to all of them."""
    owner: dict[SystemStreamPartition, str] = {}
    for name, task in tasks.items():
        for ssp in task.ssps:
            if owner.setdefault(ssp, name) != name:
                raise ConfigError(
                    f"task.broadcast.inputs: {ssp} is read by tasks {owner[ssp]!r} and {name!r} of one "
                    "container; the container cannot deliver one partition to several tasks yet",
                    key="task.broadcast.inputs",
                )


def own_container(
    model: JobModel, container_id: str, metadata: Mapping[SystemStreamPartition, SSPMetadata]
) -> ContainerModel:
    """This container's part of ``model``; a SamzaError when the model has no such container or names an
    input partition the systems do not have (the inputs changed since the model was computed)."""
    container = model.containers.get(container_id)
    if container is None:
        raise SamzaError(
            f"container {container_id!r} is not in the job model (its containers: "
            f"{', '.join(sorted(model.containers)) or 'none'})"
        )
    for task in container.tasks.values():
        missing = sorted(ssp for ssp in task.ssps if ssp not in metadata)
        if missing:
            raise SamzaError(
                f"task {task.name!r} of container {container_id!r} reads {missing[0]}, which its system does "
                "not have (the inputs changed since the job model was computed; restart the job)"
            )
    return container


__all__ = [
    "configured_systems",
    "input_metadata",
    "input_streams",
    "own_container",
    "refuse_shared_partitions",
    "start_feeding",
    "stop_feeding",
]
