"""Transactions on the consuming side: which record batches of a fetch response a consumer delivers.

Kafka's rules (KIP-98, the Java consumer's ``Fetcher``), applied to one partition of one fetch response:

- Control batches (transaction markers: COMMIT or ABORT) are never delivered, in either isolation level;
  they occupy offsets, so the position moves past them.
- ``read_uncommitted`` (isolation level 0) delivers every other batch.
- ``read_committed`` (isolation level 1) stops at the partition's *last stable offset* (LSO: the first
  offset of the oldest transaction still open; the broker sends nothing at or after it, and this filter
  makes sure of it) and drops the batches of aborted transactions. The response lists the aborted
  transactions that overlap the fetched range as ``(producer id, first offset)``: a transactional batch of
  producer P whose last offset is at or after such a first offset belongs to an aborted transaction, up to
  P's ABORT marker, which ends it. The list is per response: a transaction aborted across two fetches is
  listed in both (its first offset lies before the second fetch's start), so no state is carried over.

A non-transactional batch, and a transactional one of a producer not listed, is delivered. This module
decides per batch; :mod:`.fetcher` turns the delivered batches into envelopes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from samza_nb.errors import SystemConsumersError

READ_UNCOMMITTED: Final[int] = 0
"""The Fetch request's isolation level that returns everything up to the high watermark."""
READ_COMMITTED: Final[int] = 1
"""The Fetch request's isolation level that returns only committed transactional data (up to the LSO)."""
ISOLATION_LEVELS: Final[dict[str, int]] = {
    "read_uncommitted": READ_UNCOMMITTED,
    "read_committed": READ_COMMITTED,
}
"""``isolation.level`` values and their Fetch request codes."""

ABORT: Final[int] = 0
"""Control record type of an ABORT marker."""
COMMIT: Final[int] = 1
"""Control record type of a COMMIT marker."""
_CONTROL_KEY: Final[struct.Struct] = struct.Struct(">hh")  # version, type


class RecordBatch(Protocol):
    """What the filter reads of a record batch (aiokafka's default and legacy batches have it)."""

    @property
    def base_offset(self) -> int: ...
    @property
    def next_offset(self) -> int: ...
    @property
    def producer_id(self) -> int | None: ...
    @property
    def is_transactional(self) -> bool: ...
    @property
    def is_control_batch(self) -> bool: ...
    def __iter__(self) -> Iterator[Any]: ...


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    """The fields of one partition of a Fetch response that the consumer reads, whatever the version:
    ``last_stable`` is None when the response has none (version < 4, or -1: unknown), ``aborted`` the
    ``(producer id, first offset)`` pairs (empty below version 4), ``records`` the record set bytes."""

    log_start: int
    last_stable: int | None
    aborted: tuple[tuple[int, int], ...]
    records: bytes


def fetched_partition(version: int, rest: Sequence[Any]) -> FetchedPartition:
    """Read a Fetch response partition's fields after ``(partition, error_code, highwater)``: ``rest`` is
    ``[lso, aborted, records]`` (v4), ``[lso, log_start, aborted, records]`` (v5-v10) or
    ``[lso, log_start, aborted, preferred_read_replica, records]`` (v11); ``[records]`` before v4."""
    records = rest[-1] if rest[-1] is not None else b""
    if version < 4:
        return FetchedPartition(0, None, (), records)
    lso = int(rest[0])
    log_start = int(rest[1]) if version >= 5 else 0
    aborted_raw = rest[2] if version >= 5 else rest[1]
    aborted = tuple((int(pid), int(first)) for pid, first in (aborted_raw or ()))
    return FetchedPartition(log_start, lso if lso >= 0 else None, aborted, records)


def control_type(batch: RecordBatch, where: str) -> int:
    """The marker type (:data:`ABORT`, :data:`COMMIT`, or another control type) of a control batch;
    SystemConsumersError naming ``where`` and the offset when its record is malformed."""
    for record in batch:
        key = record.key
        if key is None or len(key) < _CONTROL_KEY.size:
            break
        _version, kind = _CONTROL_KEY.unpack_from(key)
        return int(kind)
    raise SystemConsumersError(
        f"{where}: the control batch at offset {batch.base_offset} has no valid control record key"
    )


class BatchFilter:
    """Decides for each record batch of one partition's fetch response, in order, whether its records
    are delivered (see the module docstring). One filter per partition per response."""

    __slots__ = ("_aborted_producers", "_pending", "_read_committed", "last_stable", "where")

    def __init__(
        self,
        isolation_level: int,
        aborted: Iterable[tuple[int, int]] = (),
        last_stable: int | None = None,
        where: str = "",
    ) -> None:
        self._read_committed = isolation_level == READ_COMMITTED
        self.last_stable = last_stable if self._read_committed else None
        # Aborted transactions not reached yet, latest first (pop() takes the earliest).
        self._pending = (
            sorted(aborted, key=lambda pair: pair[1], reverse=True) if self._read_committed else []
        )
        self._aborted_producers: set[int] = set()
        self.where = where

    def beyond_stable(self, batch: RecordBatch) -> bool:
        """True when ``batch`` starts at or after the last stable offset (read_committed): it and every
        later batch are not delivered, and the position must not move past them."""
        return self.last_stable is not None and batch.base_offset >= self.last_stable

    def delivers(self, batch: RecordBatch) -> bool:
        """Whether the records of ``batch`` are delivered; call for every batch before the LSO, in order."""
        if not self._read_committed:
            return not batch.is_control_batch
        producer = batch.producer_id
        if producer is not None and producer >= 0:
            last = batch.next_offset - 1
            pending = self._pending
            while pending and pending[-1][1] <= last:
                self._aborted_producers.add(pending.pop()[0])
        if batch.is_control_batch:
            if producer is not None and control_type(batch, self.where) == ABORT:
                self._aborted_producers.discard(producer)
            return False
        return not (batch.is_transactional and producer in self._aborted_producers)


__all__ = [
    "ABORT",
    "COMMIT",
    "ISOLATION_LEVELS",
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "BatchFilter",
    "FetchedPartition",
    "RecordBatch",
    "control_type",
    "fetched_partition",
]
