"""Groupers: how input partitions are grouped into tasks (``job.systemstreampartition.grouper.factory``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import ConfigError


class SSPGrouper(Protocol):
    """Maps a job's input partitions to task names."""

    def group(self, ssps: Iterable[SystemStreamPartition]) -> dict[str, frozenset[SystemStreamPartition]]:
        """Task name → the partitions that task reads."""
        ...


class GroupByPartition:
    """Task "Partition <n>" reads partition n of every input (Samza's default)."""

    def group(self, ssps: Iterable[SystemStreamPartition]) -> dict[str, frozenset[SystemStreamPartition]]:
        """Group partitions by number."""
        groups: dict[str, set[SystemStreamPartition]] = {}
        for ssp in ssps:
            groups.setdefault(f"Partition {ssp.partition}", set()).add(ssp)
        return {name: frozenset(members) for name, members in groups.items()}


class GroupBySystemStreamPartition:
    """One task per input partition, named "SystemStreamPartition [system, stream, n]" as in Samza."""

    def group(self, ssps: Iterable[SystemStreamPartition]) -> dict[str, frozenset[SystemStreamPartition]]:
        """One group per partition."""
        return {
            f"SystemStreamPartition [{ssp.system}, {ssp.stream}, {ssp.partition}]": frozenset([ssp])
            for ssp in ssps
        }


GROUPERS: dict[str, type[GroupByPartition] | type[GroupBySystemStreamPartition]] = {
    "group-by-partition": GroupByPartition,
    "group-by-ssp": GroupBySystemStreamPartition,
}


def grouper_for(name: str) -> SSPGrouper:
    """The grouper named by ``job.systemstreampartition.grouper.factory``."""
    try:
        grouper: SSPGrouper = GROUPERS[name]()
        return grouper
    except KeyError:
        raise ConfigError(
            f"job.systemstreampartition.grouper.factory={name!r} is not valid: expected one of "
            f"{', '.join(GROUPERS)}",
            key="job.systemstreampartition.grouper.factory",
        ) from None
