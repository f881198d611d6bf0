"""Job coordination: groupers and the job model (the coordinator stream and HTTP coordinator come later)."""

from samza_nb.coordinator.grouper import GroupByPartition, GroupBySystemStreamPartition, grouper_for
from samza_nb.coordinator.job_model import ContainerModel, JobModel, TaskModel, build_job_model

__all__ = [
    "ContainerModel",
    "GroupByPartition",
    "GroupBySystemStreamPartition",
    "JobModel",
    "TaskModel",
    "build_job_model",
    "grouper_for",
]
