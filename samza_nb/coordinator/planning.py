"""Computing a job model from config and the inputs' partitions (the grouper, then the container deal)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.coordinator.grouper import grouper_for
from samza_nb.coordinator.job_model import JobModel, build_job_model


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


__all__ = ["plan_job_model"]
