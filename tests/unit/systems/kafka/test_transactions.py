"""read_committed on recorded fetch responses (tests/fixtures/kafka_transactions: record batches written by
librdkafka's transactional producer into Tansu; see the README there): the fetcher drops the records of
aborted transactions and the control batches, stops at the last stable offset, and keeps the real offsets."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiokafka.protocol.fetch import FetchResponse_v11
from aiokafka.record.memory_records import MemoryRecords

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.errors import ConfigError, SystemConsumersError
from samza_nb.systems.kafka.config import KafkaSystemConfig
from samza_nb.systems.kafka.fetcher import Fetcher, PartitionState
from samza_nb.systems.kafka.transactions import (
    READ_COMMITTED,
    READ_UNCOMMITTED,
    BatchFilter,
    fetched_partition,
)

FIXTURES = Path(__file__).parents[3] / "fixtures" / "kafka_transactions"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text())
SSP = SystemStreamPartition("kafka", "txn", 0)


def settings(isolation: str | None) -> KafkaSystemConfig:
    values = {"systems.kafka.bootstrap.servers": "127.0.0.1:9"}
    if isolation is not None:
        values["systems.kafka.consumer.isolation.level"] = isolation
    return KafkaSystemConfig.from_config("kafka", Config(values))


def response(name: str) -> Any:
    return FetchResponse_v11.decode((FIXTURES / name).read_bytes())


def consume(isolation: str | None, names: list[str], start: int = 0) -> tuple[list[tuple[int, str]], int]:
    """Hand the recorded responses to a fetcher in order; the (offset, value) pairs it delivers and its
    position after them."""
    fetcher = Fetcher(settings(isolation), client=None, parts=[])  # type: ignore[arg-type]  # never sends
    part = PartitionState(SSP, start, None, None)

    async def run() -> None:
        for name in names:
            await fetcher._handle(response(name), {("txn", 0): part})

    asyncio.run(run())
    return [(int(e.offset), e.message.decode()) for e in part.buffer], part.position


def committed_offsets() -> dict[str, int]:
    return {value: base for base, _next, _pid, _txn, control, value in EXPECTED["batches"] if not control}


def test_read_committed_drops_aborted_transactions_of_two_interleaved_producers() -> None:
    delivered, position = consume("read_committed", ["whole.bin"])
    assert [value for _offset, value in delivered] == EXPECTED["read_committed"]
    offsets = committed_offsets()
    assert delivered == [(offsets[value], value) for value in EXPECTED["read_committed"]]  # real offsets
    # Stopped at the last stable offset (B's open transaction), though n6 after it is plain and fetched.
    assert position == EXPECTED["last_stable_offset"] == 22
    assert "n6" not in [v for _o, v in delivered] and "b-open" not in [v for _o, v in delivered]


def test_an_aborted_transaction_spanning_two_fetches_is_dropped_in_both() -> None:
    first, position = consume("read_committed", ["split-1.bin"])
    assert position == EXPECTED["split_at_offset"] == 15
    assert not any("abort" in value for _o, value in first)
    both, position = consume("read_committed", ["split-1.bin", "split-2.bin"])
    assert [value for _offset, value in both] == EXPECTED["read_committed"]
    assert position == EXPECTED["last_stable_offset"]


def test_a_fetch_that_starts_inside_an_aborted_transaction_drops_its_rest() -> None:
    delivered, _position = consume("read_committed", ["split-2.bin"], start=15)
    assert [value for _offset, value in delivered] == ["n4", "n5", "a-commit-after-abort"]


def test_read_uncommitted_delivers_everything_but_the_control_batches() -> None:
    for isolation in (None, "read_uncommitted"):
        delivered, position = consume(isolation, ["whole.bin"])
        data = [value for _b, _n, _p, _t, control, value in EXPECTED["batches"] if not control]
        assert [value for _offset, value in delivered] == data
        assert position == EXPECTED["highwater"]


def test_a_position_inside_a_fetched_batch_keeps_only_later_records() -> None:
    delivered, _position = consume("read_committed", ["whole.bin"], start=10)
    assert [value for _offset, value in delivered] == EXPECTED["read_committed"][5:]


def test_the_filter_alone_follows_kafkas_algorithm_batch_by_batch() -> None:
    fetched = fetched_partition(11, response("whole.bin").topics[0][1][0][3:])
    assert fetched.aborted == tuple((pid, first) for pid, first, _last in EXPECTED["aborted"])
    assert fetched.last_stable == 22
    keep = BatchFilter(READ_COMMITTED, fetched.aborted, fetched.last_stable, "txn-0")
    records = MemoryRecords(fetched.records)
    decisions = []
    while records.has_next():
        batch = records.next_batch()
        if keep.beyond_stable(batch):
            break
        decisions.append((batch.base_offset, keep.delivers(batch)))
    wanted = {offset for offset in committed_offsets().values()}
    expected_offsets = {committed_offsets()[v] for v in EXPECTED["read_committed"]}
    assert {offset for offset, kept in decisions if kept} == expected_offsets
    assert expected_offsets < wanted
    # No list: nothing is known to be aborted; read_uncommitted ignores the list and the LSO.
    plain = BatchFilter(READ_UNCOMMITTED, fetched.aborted, fetched.last_stable)
    assert plain.last_stable is None


def test_a_control_batch_without_a_valid_key_names_the_partition_and_offset() -> None:
    class Record:
        offset, key = 5, b"\x00"

    class Batch:
        base_offset, next_offset, producer_id, is_transactional, is_control_batch = 5, 6, 1, True, True

        def __iter__(self) -> Any:
            return iter([Record()])

    with pytest.raises(SystemConsumersError, match=r"txn-0: the control batch at offset 5"):
        BatchFilter(READ_COMMITTED, (), None, "txn-0").delivers(Batch())


def test_isolation_level_read_committed_is_accepted_and_others_refused() -> None:
    assert settings("read_committed").consumer_settings["isolation_level"] == "read_committed"
    assert settings("READ_COMMITTED").consumer_settings["isolation_level"] == "read_committed"
    assert "isolation_level" not in settings(None).consumer_settings  # the default: read_uncommitted
    with pytest.raises(ConfigError, match="systems.kafka.consumer.isolation.level='serializable'") as info:
        settings("serializable")
    assert info.value.key == "systems.kafka.consumer.isolation.level"
