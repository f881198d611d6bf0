"""Groupers: how input partitions are grouped into tasks (``job.systemstreampartition.grouper.factory``).

- ``group-by-partition`` (the default): task ``Partition <n>`` reads partition n of every input.
- ``group-by-ssp``: one task per input partition, ``SystemStreamPartition [<system>, <stream>, <n>]``.

Samza's factory class names (``org.apache.samza.container.grouper.stream.GroupByPartitionFactory``,
``…GroupBySystemStreamPartitionFactory``) name the same groupers (:mod:`samza_nb.config.grouper_names`).

Broadcast inputs (``task.broadcast.inputs``: ``<system>.<stream>#<n>`` or ``<system>.<stream>#[<n>-<m>]``,
comma-separated) are read by every task: both groupers leave them out of the grouping and add them to each
task, so no task is made of broadcast partitions alone (as Samza).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final, Protocol

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config.grouper_names import DEFAULT_GROUPER, GROUPER_KEY, canonical_grouper
from samza_nb.errors import ConfigError

BROADCAST_KEY: Final[str] = "task.broadcast.inputs"

_PARTITION = re.compile(r"^\d+$")
_RANGE = re.compile(r"^\[(\d+)-(\d+)\]$")


class SSPGrouper(Protocol):
    """Maps a job's input partitions to task names."""

    def group(self, ssps: Iterable[SystemStreamPartition]) -> dict[str, frozenset[SystemStreamPartition]]:
        """Task name → the partitions that task reads."""
        ...


def _with_broadcast(
    groups: Mapping[str, set[SystemStreamPartition]], broadcast: frozenset[SystemStreamPartition]
) -> dict[str, frozenset[SystemStreamPartition]]:
    return {name: frozenset(members | broadcast) for name, members in groups.items()}


class GroupByPartition:
    """Task "Partition <n>" reads partition n of every input (Samza's default); ``broadcast`` partitions go
    to every task."""

    def __init__(self, broadcast: frozenset[SystemStreamPartition] = frozenset()) -> None:
        self.broadcast = frozenset(broadcast)

    def group(self, ssps: Iterable[SystemStreamPartition]) -> dict[str, frozenset[SystemStreamPartition]]:
        """Group partitions by number."""
        groups: dict[str, set[SystemStreamPartition]] = {}
        for ssp in ssps:
            if ssp not in self.broadcast:
                groups.setdefault(f"Partition {ssp.partition}", set()).add(ssp)
        return _with_broadcast(groups, self.broadcast)


class GroupBySystemStreamPartition:
    """One task per input partition, named "SystemStreamPartition [system, stream, n]" as in Samza;
    ``broadcast`` partitions go to every task."""

    def __init__(self, broadcast: frozenset[SystemStreamPartition] = frozenset()) -> None:
        self.broadcast = frozenset(broadcast)

    def group(self, ssps: Iterable[SystemStreamPartition]) -> dict[str, frozenset[SystemStreamPartition]]:
        """One group per partition."""
        groups = {
            f"SystemStreamPartition [{ssp.system}, {ssp.stream}, {ssp.partition}]": {ssp}
            for ssp in ssps
            if ssp not in self.broadcast
        }
        return _with_broadcast(groups, self.broadcast)


GROUPERS: Final[dict[str, type[GroupByPartition] | type[GroupBySystemStreamPartition]]] = {
    "group-by-partition": GroupByPartition,
    "group-by-ssp": GroupBySystemStreamPartition,
}


def parse_broadcast_inputs(config: Mapping[str, str]) -> frozenset[SystemStreamPartition]:
    """The partitions ``task.broadcast.inputs`` names; bad syntax is a ConfigError naming the key and the
    item. A range whose start exceeds its end names no partition (as Samza)."""
    raw = config.get(BROADCAST_KEY) or ""
    result: set[SystemStreamPartition] = set()
    for item in (part.strip() for part in raw.split(",")):
        if not item:
            continue
        name, sep, partitions = item.partition("#")
        system, dot, stream = name.strip().partition(".")
        bounds = _partition_bounds(partitions.strip())
        if not sep or not dot or not system or not stream or bounds is None:
            raise ConfigError(
                f"{BROADCAST_KEY}={raw!r}: {item!r} is not of the form <system>.<stream>#<partition> or "
                "<system>.<stream>#[<first>-<last>]",
                key=BROADCAST_KEY,
            )
        first, last = bounds
        result.update(SystemStreamPartition(system, stream, p) for p in range(first, last + 1))
    return frozenset(result)


def _partition_bounds(text: str) -> tuple[int, int] | None:
    if _PARTITION.match(text):
        return int(text), int(text)
    span = _RANGE.match(text)
    return (int(span[1]), int(span[2])) if span else None


def grouper_for(config: Mapping[str, str]) -> SSPGrouper:
    """The grouper ``job.systemstreampartition.grouper.factory`` names (default group-by-partition), with
    the broadcast partitions of ``task.broadcast.inputs``; Samza's factory class names are accepted."""
    cls = GROUPERS[canonical_grouper(config.get(GROUPER_KEY))]
    grouper: SSPGrouper = cls(parse_broadcast_inputs(config))
    return grouper


__all__ = [
    "BROADCAST_KEY",
    "DEFAULT_GROUPER",
    "GROUPERS",
    "GROUPER_KEY",
    "GroupByPartition",
    "GroupBySystemStreamPartition",
    "SSPGrouper",
    "grouper_for",
    "parse_broadcast_inputs",
]
