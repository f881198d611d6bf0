"""Job coordination: the coordinator stream (messages, bootstrap, store), groupers and the job model."""

from samza_nb.api.job_model import ContainerModel, JobModel, TaskModel
from samza_nb.coordinator.bootstrap import bootstrap
from samza_nb.coordinator.grouper import (
    GroupByPartition,
    GroupBySystemStreamPartition,
    grouper_for,
    parse_broadcast_inputs,
)
from samza_nb.coordinator.messages import CoordinatorStreamMessage
from samza_nb.coordinator.planning import build_job_model
from samza_nb.coordinator.stream_store import (
    CoordinatorStreamStore,
    coordinator_stream_name,
    coordinator_system,
)

__all__ = [
    "ContainerModel",
    "CoordinatorStreamMessage",
    "CoordinatorStreamStore",
    "GroupByPartition",
    "GroupBySystemStreamPartition",
    "JobModel",
    "TaskModel",
    "bootstrap",
    "build_job_model",
    "coordinator_stream_name",
    "coordinator_system",
    "grouper_for",
    "parse_broadcast_inputs",
]
