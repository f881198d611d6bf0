"""Computing a job model from config and the inputs' partitions: the grouper, then the deal of the tasks to
containers (Samza's GroupByContainerCount) with their changelog partitions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samza_nb.api.job_model import ContainerModel, JobModel, TaskModel
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.coordinator.grouper import grouper_for
from samza_nb.errors import ConfigError


def plan_job_model(
    config: Config,
    ssps: Iterable[SystemStreamPartition],
    previous_changelog: Mapping[str, int] | None = None,
) -> JobModel:
    """The job model for ``config`` whose inputs have the partitions ``ssps``: grouped into tasks by
    ``job.systemstreampartition.grouper.factory`` (and ``task.broadcast.inputs``), dealt to
    ``job.container.count`` containers, keeping ``previous_changelog`` (task -> changelog partition)
    mappings; the model carries ``config``. A job run in one process passes this function to
    ``SamzaContainer(planner=...)``; the job coordinator calls it with its coordinator stream's mappings."""
    groups = grouper_for(config).group(ssps)
    return build_job_model(groups, config.get_int("job.container.count", 1), previous_changelog, config)


def build_job_model(
    groups: Mapping[str, frozenset[SystemStreamPartition]],
    container_count: int = 1,
    previous_changelog: Mapping[str, int] | None = None,
    config: Mapping[str, str] | None = None,
) -> JobModel:
    """Deal the tasks, sorted by name as strings ("Partition 10" < "Partition 2", as Samza), round robin to
    ``container_count`` containers "0", "1", …

    Changelog partitions: the mappings of ``previous_changelog`` are kept; tasks without one get, in the
    same string order, the highest partition so far + 1 (the first gets 0). Fewer tasks than containers is
    a ConfigError naming ``job.container.count``. ``config`` becomes the model's config.
    """
    if container_count < 1:
        raise ConfigError(f"job.container.count={container_count} must be >= 1", key="job.container.count")
    names = sorted(groups)
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
        containers[str(index % container_count)][name] = TaskModel(
            name, frozenset(groups[name]), changelog[name]
        )
    return JobModel(
        {cid: ContainerModel(cid, tasks) for cid, tasks in containers.items()},
        dict(config or {}),
    )


__all__ = ["build_job_model", "plan_job_model"]
