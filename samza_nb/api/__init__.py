"""What users implement and touch: envelopes, stream identities, task protocols and their helpers."""

from samza_nb.api.streams import (
    END_OF_STREAM_OFFSET,
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStream,
    SystemStreamPartition,
)
from samza_nb.api.task import (
    AsyncStreamTask,
    ClosableTask,
    EndOfStreamListenerTask,
    InitableTask,
    MessageCollector,
    PartitionEndListenerTask,
    RequestScope,
    StreamTask,
    TaskCallback,
    TaskContext,
    TaskCoordinator,
    WindowableTask,
)

__all__ = [
    "END_OF_STREAM_OFFSET",
    "AsyncStreamTask",
    "ClosableTask",
    "EndOfStreamListenerTask",
    "IncomingMessageEnvelope",
    "InitableTask",
    "MessageCollector",
    "OutgoingMessageEnvelope",
    "PartitionEndListenerTask",
    "RequestScope",
    "StreamTask",
    "SystemStream",
    "SystemStreamPartition",
    "TaskCallback",
    "TaskContext",
    "TaskCoordinator",
    "WindowableTask",
]
