"""Where control messages go: Samza's TestControlMessageSender ported, plus the aggregation partition."""

from __future__ import annotations

import pytest

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.control import (
    EndOfStreamMessage,
    WatermarkMessage,
    aggregation_partition,
    broadcast_to_other_partitions,
    to_aggregation_partition,
)
from samza_nb.errors import SamzaError
from samza_nb.systems.partitioner import murmur2

SYSTEM_STREAM = SystemStream("test-system", "test-stream")


def test_send() -> None:
    """Samza's testSend: a control message goes to exactly one partition of the stream, keyless."""
    watermark = WatermarkMessage("task 0", timestamp=1_700_000_000_000)
    envelope = to_aggregation_partition(watermark, SYSTEM_STREAM, 4)
    assert envelope.system_stream == SYSTEM_STREAM
    assert envelope.message is watermark
    assert envelope.key is None and envelope.partition_key is None
    assert envelope.partition == aggregation_partition("test-stream", 4)
    # every task picks the same partition
    assert {
        to_aggregation_partition(EndOfStreamMessage(f"task {i}"), SYSTEM_STREAM, 4).partition
        for i in range(5)
    } == {envelope.partition}


def test_broadcast() -> None:
    """Samza's testBroadcast: every partition but the sender's own, keyless."""
    watermark = WatermarkMessage(None, timestamp=5)
    ssp = SystemStreamPartition("test-system", "test-stream", 0)
    envelopes = broadcast_to_other_partitions(watermark, ssp, 4)
    assert [e.partition for e in envelopes] == [1, 2, 3]
    assert all(
        e.system_stream == SYSTEM_STREAM and e.key is None and e.message is watermark for e in envelopes
    )
    assert (
        broadcast_to_other_partitions(watermark, SystemStreamPartition("test-system", "test-stream", 2), 4)[
            1
        ].partition
        == 1
    )
    assert broadcast_to_other_partitions(watermark, ssp, 1) == []


def test_aggregation_partition_is_kafkas_murmur2_of_the_name() -> None:
    # murmur2(b"test-stream") is 0x9b99e2d3; positive: 0x1b99e2d3 = 462021331
    assert murmur2(b"test-stream") == 0x9B99E2D3
    assert aggregation_partition("test-stream", 4) == 462021331 % 4 == 3
    assert aggregation_partition("test-stream", 1) == 0
    names = [f"app-1-partition_by-op{i}" for i in range(200)] + ["ünïcode-stream"]
    for partitions in (1, 2, 3, 7, 32):
        chosen = [aggregation_partition(name, partitions) for name in names]
        assert all(0 <= p < partitions for p in chosen)
    assert len({aggregation_partition(name, 32) for name in names}) > 16  # spread, not constant


@pytest.mark.parametrize("partitions", [0, -3])
def test_partition_count_must_be_positive(partitions: int) -> None:
    with pytest.raises(SamzaError, match="test-stream"):
        aggregation_partition("test-stream", partitions)
    with pytest.raises(SamzaError, match="test-stream"):
        broadcast_to_other_partitions(
            EndOfStreamMessage(), SystemStreamPartition("s", "test-stream", 0), partitions
        )
