"""The newest *delivered* offset of Kafka partitions: where a consumer's last message really is.

The high watermark says where the next record will go, but the records just below it need not be
messages a consumer ever sees: transaction markers (control batches) occupy offsets and are never
delivered, and under read_committed neither are aborted transactions nor anything at or after the last
stable offset. A partition whose last record is a COMMIT marker would otherwise look one message behind
forever (lag 1, a bootstrap stream never caught up, a coordinator stream read that waits for an offset no
message has). This module reads the tail of each partition with the consumer's own filter
(:class:`.transactions.BatchFilter`) and returns the offset of the last record it delivers: first the last
record, then windows 16 times wider, back to the log start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import aiokafka.errors as kafka_errors
from aiokafka import AIOKafkaClient, TopicPartition
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.record.memory_records import MemoryRecords

from samza_nb.errors import SamzaError
from samza_nb.systems.kafka.fetcher import RETRIABLE
from samza_nb.systems.kafka.transactions import READ_COMMITTED, BatchFilter, fetched_partition

_FIRST_WINDOW: Final[int] = 1
_WIDEN: Final[int] = 16
_PARTITION_BYTES: Final[int] = 1 << 20
_TRIES: Final[int] = 5  # per partition, for errors a metadata refresh may cure
_RETRY_BACKOFF_S: Final[float] = 0.1
_MAX_WAIT_MS: Final[int] = 10  # Tansu answers a Fetch with max_wait 0 with no partitions at all


@dataclass(frozen=True, slots=True)
class Tail:
    """One partition's end as a consumer sees it: ``end`` is the high watermark, or under read_committed
    the last stable offset when it is lower (where such a consumer stops); ``newest`` the offset of the
    last record delivered below ``end``, None when no record there is delivered."""

    end: int
    newest: int | None


async def read_tails(
    client: AIOKafkaClient, isolation_level: int, spans: Mapping[TopicPartition, tuple[int, int]]
) -> dict[TopicPartition, Tail]:
    """For each partition with ``(log start, high watermark)`` in ``spans``, its :class:`Tail`. A retriable
    Kafka error (a leader moved) is retried after a metadata refresh, a window whose start retention
    removed starts at the new log start, up to a few tries; any other error, or one that persists, is a
    SamzaError naming the partition."""
    result: dict[TopicPartition, Tail] = {}
    ends = {tp: end for tp, (_start, end) in spans.items()}
    window = _FIRST_WINDOW
    todo = {tp for tp, (start, end) in spans.items() if start < end}
    for tp in set(spans) - todo:
        result[tp] = Tail(spans[tp][1], None)
    while todo:
        starts = {tp: max(spans[tp][0], ends[tp] - window) for tp in todo}
        found = await _scan(client, isolation_level, starts, ends)
        widen = set()
        for tp in todo:
            newest = found.get(tp)
            if newest is not None or starts[tp] <= spans[tp][0]:
                result[tp] = Tail(ends[tp], newest)
            else:
                widen.add(tp)
        todo = widen
        window *= _WIDEN
    return result


async def _scan(
    client: AIOKafkaClient,
    isolation_level: int,
    starts: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
) -> dict[TopicPartition, int | None]:
    """Read each partition from ``starts`` to ``ends`` (lowered to the LSO under read_committed, in place);
    the last delivered offset of each."""
    positions = dict(starts)
    found: dict[TopicPartition, int | None] = {}
    tries: dict[TopicPartition, int] = {}
    while positions:
        retry = False
        by_node: dict[int, list[TopicPartition]] = {}
        for tp in positions:
            leader = client.cluster.leader_for_partition(tp)
            if leader is None or leader < 0:
                await client.force_metadata_update()
                leader = client.cluster.leader_for_partition(tp)
                if leader is None or leader < 0:
                    raise SamzaError(f"Kafka partition {tp.topic}-{tp.partition} has no leader")
            by_node.setdefault(leader, []).append(tp)
        for node, tps in by_node.items():
            by_topic: dict[str, list[tuple[int, int, int]]] = {}
            for tp in tps:
                by_topic.setdefault(tp.topic, []).append((tp.partition, positions[tp], _PARTITION_BYTES))
            request = FetchRequest(_MAX_WAIT_MS, 1, _PARTITION_BYTES, isolation_level, list(by_topic.items()))
            response = await client.send(node, request)
            unanswered = set(tps)
            for topic, partitions in response.topics:
                for partition, error_code, _highwater, *rest in partitions:
                    tp = TopicPartition(topic, partition)
                    if tp not in unanswered:
                        continue
                    unanswered.discard(tp)
                    error = kafka_errors.for_code(error_code)
                    if error is kafka_errors.NoError:
                        _advance(tp, response.API_VERSION, rest, isolation_level, positions, ends, found)
                        continue
                    log_start = rest[1] if response.API_VERSION >= 5 and rest[1] >= 0 else None
                    tries[tp] = tries.get(tp, 0) + 1
                    if tries[tp] < _TRIES and issubclass(error, RETRIABLE):
                        retry = True  # a leader moved: fresh metadata, then again
                    elif (
                        tries[tp] < _TRIES
                        and error is kafka_errors.OffsetOutOfRangeError
                        and log_start is not None
                        and log_start > positions[tp]
                    ):
                        positions[tp] = log_start  # retention removed the window's start meanwhile
                    else:
                        raise SamzaError(
                            f"reading the tail of Kafka partition {topic}-{partition} at offset "
                            f"{positions[tp]} failed: {error.__name__}"
                        )
            if unanswered:  # never silently: an unread tail would make the partition look empty
                names = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(unanswered))
                raise SamzaError(f"reading the tail of Kafka partition(s) {names}: the broker did not answer")
        if retry:
            await client.force_metadata_update()
            await asyncio.sleep(_RETRY_BACKOFF_S)
    return found


def _advance(
    tp: TopicPartition,
    version: int,
    rest: list[Any],
    isolation_level: int,
    positions: dict[TopicPartition, int],
    ends: dict[TopicPartition, int],
    found: dict[TopicPartition, int | None],
) -> None:
    """Apply one partition's fetched records: note the last delivered offset below its end, move its
    position, and drop it from ``positions`` when its end is reached (or nothing more came)."""
    fetched = fetched_partition(version, rest)
    if isolation_level == READ_COMMITTED and fetched.last_stable is not None:
        ends[tp] = min(ends[tp], fetched.last_stable)
    keep = BatchFilter(isolation_level, fetched.aborted, fetched.last_stable, f"{tp.topic}-{tp.partition}")
    start = position = positions[tp]
    end = ends[tp]
    records = MemoryRecords(fetched.records)
    while records.has_next() and position < end:
        batch = records.next_batch()
        if keep.beyond_stable(batch):
            break
        if keep.delivers(batch):
            for record in batch:
                if start <= record.offset < end:
                    found[tp] = record.offset
        position = batch.next_offset
    if position >= end or position == positions[tp]:
        del positions[tp]
    else:
        positions[tp] = position


__all__ = ["Tail", "read_tails"]
