"""The job model: which containers run which tasks, and which input partitions each task reads."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import ConfigError


@dataclass(frozen=True)
class TaskModel:
    """A task: its name, input partitions and changelog partition."""

    name: str
    ssps: frozenset[SystemStreamPartition]
    changelog_partition: int


@dataclass(frozen=True)
class ContainerModel:
    """A container: its id and its tasks by name."""

    id: str
    tasks: Mapping[str, TaskModel] = field(default_factory=dict)


@dataclass(frozen=True)
class JobModel:
    """Containers by id; every task and SSP appears exactly once."""

    containers: Mapping[str, ContainerModel]

    @property
    def tasks(self) -> dict[str, TaskModel]:
        """Every task of the job by name."""
        return {name: task for c in self.containers.values() for name, task in c.tasks.items()}


def _partition_number(task_name: str) -> int | None:
    prefix = "Partition "
    if task_name.startswith(prefix) and task_name[len(prefix) :].isdigit():
        return int(task_name[len(prefix) :])
    return None


def build_job_model(
    groups: Mapping[str, frozenset[SystemStreamPartition]],
    container_count: int = 1,
    previous_changelog: Mapping[str, int] | None = None,
) -> JobModel:
    """Deal tasks (sorted by name) round robin to ``container_count`` containers ("0", "1", …).

    Changelog partitions: existing mappings are kept; new tasks get max + 1. Fewer tasks than containers is
    a ConfigError naming ``job.container.count``.
    """
    if container_count < 1:
        raise ConfigError(f"job.container.count={container_count} must be >= 1", key="job.container.count")
    names = sorted(groups, key=lambda n: (_partition_number(n) is None, _partition_number(n) or 0, n))
    if len(names) < container_count:
        raise ConfigError(
            f"job.container.count={container_count} but the job has only {len(names)} tasks; "
            "every container needs at least one task",
            key="job.container.count",
        )
    changelog = dict(previous_changelog or {})
    next_partition = max(changelog.values(), default=-1) + 1
    containers: dict[str, dict[str, TaskModel]] = {str(i): {} for i in range(container_count)}
    for index, name in enumerate(names):
        if name not in changelog:
            changelog[name] = next_partition
            next_partition += 1
        containers[str(index % container_count)][name] = TaskModel(name, groups[name], changelog[name])
    return JobModel({cid: ContainerModel(cid, tasks) for cid, tasks in containers.items()})


def ssps_of(streams: Iterable[tuple[str, str, int]]) -> list[SystemStreamPartition]:
    """SSPs for ``(system, stream, partition_count)`` triples."""
    return [SystemStreamPartition(s, t, p) for s, t, n in streams for p in range(n)]
