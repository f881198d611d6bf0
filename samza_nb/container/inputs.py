"""A job's inputs as its config names them, the systems it configures, and what they say of their
partitions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.errors import ConfigError
from samza_nb.systems.base import FeedingSystemAdmin

if TYPE_CHECKING:
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


__all__ = ["configured_systems", "input_metadata", "input_streams", "start_feeding", "stop_feeding"]
