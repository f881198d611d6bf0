"""Where control messages go on an intermediate stream (Samza's ControlMessageSender).

Each upstream task sends its control messages to one aggregation partition of the stream; the task that
consumes that partition, once it has them from every producer, re-broadcasts the result without a task name
to the other partitions. The aggregation partition is a stable function of the stream name (murmur2 of its
UTF-8 bytes, as Kafka places a key), so every task and every process picks the same one.
"""

from __future__ import annotations

from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.control.messages import ControlMessage
from samza_nb.errors import SamzaError
from samza_nb.systems.partitioner import key_partition


def _check_partitions(stream: str, partitions: int) -> None:
    if not isinstance(partitions, int) or isinstance(partitions, bool) or partitions < 1:
        raise SamzaError(f"stream {stream!r} needs a partition count >= 1, got {partitions!r}")


def aggregation_partition(stream: str, partitions: int) -> int:
    """The partition of ``stream`` (the physical name) that aggregates control messages: Kafka's
    ``toPositive(murmur2(utf8(stream))) % partitions``. A SamzaError when ``partitions`` < 1."""
    _check_partitions(stream, partitions)
    return key_partition(stream.encode("utf-8"), partitions)


def to_aggregation_partition(
    message: ControlMessage, system_stream: SystemStream, partitions: int
) -> OutgoingMessageEnvelope:
    """The envelope that sends ``message`` to the aggregation partition of ``system_stream`` (no key)."""
    partition = aggregation_partition(system_stream.stream, partitions)
    return OutgoingMessageEnvelope(system_stream, message, partition=partition)


def broadcast_to_other_partitions(
    message: ControlMessage, ssp: SystemStreamPartition, partitions: int
) -> list[OutgoingMessageEnvelope]:
    """The envelopes that send ``message`` to every partition of ``ssp``'s stream but ``ssp``'s own, in
    partition order (no key)."""
    _check_partitions(ssp.stream, partitions)
    system_stream = ssp.system_stream
    return [
        OutgoingMessageEnvelope(system_stream, message, partition=p)
        for p in range(partitions)
        if p != ssp.partition
    ]


__all__ = ["aggregation_partition", "broadcast_to_other_partitions", "to_aggregation_partition"]
