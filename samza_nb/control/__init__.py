"""Watermarks and end-of-stream through intermediate streams: the control messages, their byte layout,
where they are sent, and the per-partition bookkeeping of the tasks that receive them."""

from samza_nb.control.messages import (
    CONTROL_MESSAGE_TYPES,
    CONTROL_VERSION,
    WATERMARK_NOT_EXIST,
    ControlMessage,
    EndOfStreamMessage,
    WatermarkMessage,
    is_control_message,
)
from samza_nb.control.sender import (
    aggregation_partition,
    broadcast_to_other_partitions,
    to_aggregation_partition,
)
from samza_nb.control.serde import IntermediateMessageSerde, PickleIntermediateMessageSerde
from samza_nb.control.states import EndOfStreamStates, WatermarkStates

__all__ = [
    "CONTROL_MESSAGE_TYPES",
    "CONTROL_VERSION",
    "WATERMARK_NOT_EXIST",
    "ControlMessage",
    "EndOfStreamMessage",
    "EndOfStreamStates",
    "IntermediateMessageSerde",
    "PickleIntermediateMessageSerde",
    "WatermarkMessage",
    "WatermarkStates",
    "aggregation_partition",
    "broadcast_to_other_partitions",
    "is_control_message",
    "to_aggregation_partition",
]
