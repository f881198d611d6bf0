"""The consumer's fetch loop: Kafka Fetch requests over aiokafka's client, records straight into envelopes.

aiokafka's ``AIOKafkaConsumer.getmany`` builds a ``ConsumerRecord`` (a dataclass) for every record through
a generator, which costs about as much as everything the container does with a message. This fetcher uses
aiokafka's connection and protocol layer (``AIOKafkaClient``, ``FetchRequest``, ``MemoryRecords``) and turns
each record batch into :class:`IncomingMessageEnvelope` objects in one list comprehension.

Per partition it keeps at most one fetched response that the container has not taken yet: a partition is
fetched only when its buffer is empty, so a partition the container does not poll (its own buffer is full)
is not fetched again: back-pressure. Requests go to each partition's leader, at most one in flight per
broker (a broker answers a connection's requests in order), as long polls (``fetch.max.wait.ms``) unless
another partition of that broker has a full buffer that may be taken any moment: then the poll waits at most
:data:`SHORT_WAIT_MS`, so the long poll of caught-up partitions never holds back lagging ones. Failed
requests are retried after ``retry.backoff.ms``; the consumer, not this loop, decides when silence means
the broker is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import aiokafka.errors as kafka_errors
from aiokafka import AIOKafkaClient, TopicPartition
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.protocol.offset import OffsetRequest
from aiokafka.record.memory_records import MemoryRecords

from samza_nb.api.streams import NO_HEADERS, IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.errors import SystemConsumersError
from samza_nb.systems.kafka.clients import describe
from samza_nb.systems.kafka.transactions import (
    ISOLATION_LEVELS,
    READ_UNCOMMITTED,
    BatchFilter,
    fetched_partition,
)
from samza_nb.systems.offsets import integer_reset

if TYPE_CHECKING:
    from samza_nb.api.metadata import OffsetReset
    from samza_nb.systems.kafka.config import KafkaSystemConfig

log = logging.getLogger(__name__)

Decoder = Callable[[bytes], Any]

SHORT_WAIT_MS: Final[int] = 20
"""Longest a fetch waits for new data while another partition of the same broker has a full buffer."""
EARLIEST: Final[int] = -2
LATEST: Final[int] = -1
RETRIABLE: Final[tuple[type[BaseException], ...]] = (
    kafka_errors.NotLeaderForPartitionError,
    kafka_errors.UnknownTopicOrPartitionError,
    kafka_errors.LeaderNotAvailableError,
    kafka_errors.NotEnoughReplicasError,
    kafka_errors.KafkaStorageError,
    kafka_errors.RequestTimedOutError,
)
"""Fetch errors that a metadata refresh and another try may cure (a leader moved, a replica lagging)."""


class PartitionState:
    """One assigned partition: where to fetch next, what was fetched and not yet taken, and health."""

    __slots__ = (
        "buffer",
        "fetching",
        "highwater",
        "key_decode",
        "last_error",
        "last_ok",
        "msg_decode",
        "position",
        "ssp",
        "tp",
    )

    def __init__(
        self,
        ssp: SystemStreamPartition,
        position: int,
        key_decode: Decoder | None,
        msg_decode: Decoder | None,
    ) -> None:
        self.ssp = ssp
        self.tp = TopicPartition(ssp.stream, ssp.partition)
        self.position = position
        self.buffer: list[IncomingMessageEnvelope] = []
        self.fetching = False
        self.highwater: int | None = None
        self.last_ok = time.monotonic()
        self.last_error: str | None = None
        self.key_decode = key_decode
        self.msg_decode = msg_decode


class Fetcher:
    """Fetches the given partitions in the background into their ``buffer`` (see the module docstring).

    ``data`` is set whenever a buffer receives envelopes; ``failure`` holds an error that stops fetching
    (a corrupt batch, a message that does not deserialize, an offset out of range with no reset policy).
    """

    def __init__(
        self, settings: KafkaSystemConfig, client: AIOKafkaClient, parts: list[PartitionState]
    ) -> None:
        self.settings = settings
        self.client = client
        self.parts = parts
        options = settings.consumer_settings
        self.max_wait_ms = int(options.get("fetch_max_wait_ms", 500))
        self.short_wait_ms = min(self.max_wait_ms, SHORT_WAIT_MS)
        self.min_bytes = int(options.get("fetch_min_bytes", 1))
        self.max_bytes = int(options.get("fetch_max_bytes", 52428800))
        self.partition_bytes = int(options.get("max_partition_fetch_bytes", 1048576))
        self.check_crcs = bool(options.get("check_crcs", True))
        self.backoff_s = int(options.get("retry_backoff_ms", 100)) / 1000.0
        self.reset = str(options.get("auto_offset_reset", "earliest"))
        self.isolation_level = ISOLATION_LEVELS[str(options.get("isolation_level", "read_uncommitted"))]
        # read_uncommitted filters nothing per response (control batches only): one shared filter, and the
        # response's fields read without building a FetchedPartition per partition per response.
        self._uncommitted = (
            BatchFilter(READ_UNCOMMITTED) if self.isolation_level == READ_UNCOMMITTED else None
        )
        self.data = asyncio.Event()
        self.failure: BaseException | None = None
        self.resets: list[OffsetReset] = []
        """Partitions moved per auto.offset.reset since the consumer last took them, oldest first."""
        self._wake = asyncio.Event()
        self._in_flight: dict[int, asyncio.Task[None]] = {}
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the background loop."""
        self._task = asyncio.create_task(self._run(), name=f"kafka-fetcher-{self.settings.system}")

    async def stop(self) -> None:
        """Stop the loop and every request in flight."""
        tasks = [task for task in (self._task, *self._in_flight.values()) if task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._in_flight.clear()
        self._task = None

    def wake(self) -> None:
        """A buffer was emptied: fetch again."""
        self._wake.set()

    # -- the loop -------------------------------------------------------------------------------------
    async def _run(self) -> None:
        try:
            while True:
                self._wake.clear()
                by_node, busy, unknown = self._fetchable()
                if unknown:
                    self.client.force_metadata_update()
                for node, parts in by_node.items():
                    if node not in self._in_flight:
                        for part in parts:
                            part.fetching = True
                        # A long poll would hold back the partitions of this broker whose buffers are
                        # about to be taken (one request in flight per broker): poll briefly instead.
                        wait = self.short_wait_ms if node in busy else self.max_wait_ms
                        self._in_flight[node] = asyncio.create_task(self._fetch(node, parts, wait))
                waiters: list[asyncio.Future[Any]] = list(self._in_flight.values())
                wake = asyncio.ensure_future(self._wake.wait())
                try:
                    timeout = self.backoff_s if unknown else None
                    await asyncio.wait([*waiters, wake], timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    wake.cancel()
                for node, task in list(self._in_flight.items()):
                    if task.done():
                        del self._in_flight[node]
                        task.result()  # a failure of the fetch logic itself ends the loop
        except asyncio.CancelledError:
            raise
        except BaseException as exc:
            self._fail(exc)

    def _fetchable(self) -> tuple[dict[int, list[PartitionState]], set[int], bool]:
        """Partitions with an empty buffer and no fetch in flight, by leader; the leaders that also lead a
        partition whose buffer is still full; and whether a leader is unknown."""
        by_node: dict[int, list[PartitionState]] = {}
        busy: set[int] = set()
        unknown = False
        cluster = self.client.cluster
        for part in self.parts:
            if part.fetching:
                continue
            leader = cluster.leader_for_partition(part.tp)
            if leader is None or leader < 0:
                unknown = True
                part.last_error = "no leader known for the partition"
            elif part.buffer:
                busy.add(leader)
            else:
                by_node.setdefault(leader, []).append(part)
        return by_node, busy, unknown

    async def _fetch(self, node: int, parts: list[PartitionState], max_wait_ms: int) -> None:
        try:
            by_topic: dict[str, list[tuple[int, int, int]]] = {}
            for part in parts:
                by_topic.setdefault(part.tp.topic, []).append(
                    (part.tp.partition, part.position, self.partition_bytes)
                )
            request = FetchRequest(
                max_wait_ms, self.min_bytes, self.max_bytes, self.isolation_level, list(by_topic.items())
            )
            try:
                response = await self.client.send(node, request)
            except kafka_errors.KafkaError as exc:
                text = describe(exc)
                for part in parts:
                    part.last_error = text
                log.debug("fetch from node %s failed: %s", node, text)
                await asyncio.sleep(self.backoff_s)
                return
            await self._handle(response, {(p.tp.topic, p.tp.partition): p for p in parts})
        finally:
            for part in parts:
                part.fetching = False
            self._wake.set()

    async def _handle(self, response: Any, parts: dict[tuple[str, int], PartitionState]) -> None:
        now = time.monotonic()
        got_data = False
        version = response.API_VERSION
        for topic, partitions in response.topics:
            for partition, error_code, highwater, *rest in partitions:
                part = parts.get((topic, partition))
                if part is None:
                    continue
                error = kafka_errors.for_code(error_code)
                if error is kafka_errors.NoError:
                    part.highwater = highwater
                    part.last_ok = now
                    part.last_error = None
                    keep = self._uncommitted
                    if keep is None:
                        fetched = fetched_partition(version, rest)
                        log_start, records = fetched.log_start, fetched.records
                        keep = self._filter(part, fetched.aborted, fetched.last_stable)
                    else:
                        log_start = rest[1] if version >= 5 else 0
                        records = rest[-1] or b""
                    if part.position > highwater:
                        # Kafka answers OFFSET_OUT_OF_RANGE here; Tansu answers with no records.
                        await self._reset(
                            part, f"is past the partition's end (high watermark {highwater})", highwater
                        )
                    elif part.position < log_start:
                        await self._reset(
                            part, f"is before the partition's oldest offset {log_start}", highwater
                        )
                    elif self._parse(part, records, keep):
                        got_data = True
                elif error is kafka_errors.OffsetOutOfRangeError:
                    await self._reset(part, "is out of range (past the partition's end or before its oldest)")
                elif issubclass(error, RETRIABLE):
                    part.last_error = error.__name__
                    self.client.force_metadata_update()
                else:
                    raise SystemConsumersError(
                        f"fetching {part.ssp} at offset {part.position} from "
                        f"{self.settings.describe_brokers()} failed: {error.__name__}"
                    )
        if got_data:
            self.data.set()

    def _filter(
        self, part: PartitionState, aborted: tuple[tuple[int, int], ...], last_stable: int | None
    ) -> BatchFilter:
        """The transaction filter of one partition's response (:mod:`.transactions`)."""
        return BatchFilter(self.isolation_level, aborted, last_stable, str(part.ssp))

    def _parse(self, part: PartitionState, data: bytes, keep: BatchFilter) -> bool:
        """Append the delivered records at or after the partition's position to its buffer (control batches
        and, under read_committed, aborted transactions are skipped; nothing at or after the last stable
        offset is read); True if any."""
        records = MemoryRecords(data)
        start = position = part.position
        ssp = part.ssp
        while records.has_next():
            batch = records.next_batch()
            if self.check_crcs and not batch.validate_crc():
                raise SystemConsumersError(f"{ssp}: corrupt record batch (CRC mismatch) at offset {position}")
            if keep.beyond_stable(batch):
                break
            if keep.delivers(batch):
                try:
                    self._unpack(part, batch, start)
                except kafka_errors.UnsupportedCodecError as exc:
                    raise SystemConsumersError(
                        f"{ssp}: the record batch at offset {position} is compressed with a codec whose "
                        f"library is missing ({exc}); the kafka extra installs every codec: "
                        "pip install 'samza_nb[kafka]'"
                    ) from None
            position = batch.next_offset
        if position > part.position:
            part.position = position
        return bool(part.buffer)

    def _unpack(self, part: PartitionState, batch: Any, start: int) -> None:
        """Append the records of ``batch`` at or after offset ``start`` to the partition's buffer as
        envelopes: offset, key, value, timestamp and headers (the shared empty tuple when none)."""
        if part.key_decode is None and part.msg_decode is None:
            ssp, envelope = part.ssp, IncomingMessageEnvelope
            records = batch if batch.base_offset >= start else [r for r in batch if r.offset >= start]
            part.buffer += [
                envelope(
                    ssp,
                    str(r.offset),
                    r.key,
                    r.value,
                    ts if (ts := r.timestamp) is not None and ts >= 0 else None,
                    tuple(h) if (h := r.headers) else NO_HEADERS,
                )
                for r in records
            ]
        else:
            part.buffer += self._decoded(part, batch, start)

    @staticmethod
    def _decoded(part: PartitionState, batch: Any, start: int) -> list[IncomingMessageEnvelope]:
        key_decode, msg_decode, ssp = part.key_decode, part.msg_decode, part.ssp
        envelopes = []
        for r in batch:
            if r.offset < start:
                continue
            key, value = r.key, r.value
            try:
                if key_decode is not None and key is not None:
                    key = key_decode(key)
                if msg_decode is not None and value is not None:
                    value = msg_decode(value)
            except Exception as exc:
                raise SystemConsumersError(
                    f"input {ssp} offset {r.offset}: the message could not be deserialized "
                    f"(systems.{ssp.system}.samza.key.serde/msg.serde or the stream's): {exc}"
                ) from exc
            ts = r.timestamp
            headers = r.headers
            envelopes.append(
                IncomingMessageEnvelope(
                    ssp,
                    str(r.offset),
                    key,
                    value,
                    ts if ts is not None and ts >= 0 else None,
                    tuple(headers) if headers else NO_HEADERS,
                )
            )
        return envelopes

    async def _reset(self, part: PartitionState, reason: str, highwater: int | None = None) -> None:
        """The position no longer exists (``reason``): move to the oldest (or newest) offset per
        auto.offset.reset and report it in :attr:`resets`. ``highwater``: the partition's, just fetched
        (the newest offset to move to without asking: some brokers answer ListOffsets(latest) with the
        base offset of the last batch)."""
        key = f"systems.{self.settings.system}.consumer.auto.offset.reset"
        if self.reset not in ("earliest", "latest"):
            raise SystemConsumersError(
                f"{part.ssp}: offset {part.position} is out of range on {self.settings.describe_brokers()} "
                f"({reason}; the topic was recreated or truncated?) and {key} is {self.reset!r}: set it to "
                "earliest or latest, or reset the job's checkpoints"
            )
        timestamp = EARLIEST if self.reset == "earliest" else LATEST
        if timestamp == LATEST and highwater is not None:
            self._moved(part, highwater, reason, key)
            return
        leader = self.client.cluster.leader_for_partition(part.tp)
        if leader is None or leader < 0:
            self.client.force_metadata_update()
            return
        request = OffsetRequest(-1, self.isolation_level, [(part.tp.topic, [(part.tp.partition, timestamp)])])
        try:
            response = await self.client.send(leader, request)
        except kafka_errors.KafkaError as exc:
            part.last_error = describe(exc)
            return
        for _topic, partitions in response.topics:
            for _partition, error_code, *info in partitions:
                if kafka_errors.for_code(error_code) is not kafka_errors.NoError:
                    part.last_error = kafka_errors.for_code(error_code).__name__
                    return
                offset = info[1] if response.API_VERSION >= 1 else (info[0][0] if info[0] else 0)
                self._moved(part, int(offset), reason, key)

    def _moved(self, part: PartitionState, offset: int, reason: str, key: str) -> None:
        """Move ``part`` to ``offset`` per auto.offset.reset and report it."""
        reset = integer_reset(part.ssp, part.position, offset, reason, f"{key}={self.reset}")
        log.warning("%s", reset.describe())
        self.resets.append(reset)
        part.position = offset

    def _fail(self, exc: BaseException) -> None:
        if self.failure is None:
            self.failure = exc
        self.data.set()


__all__ = ["Fetcher", "PartitionState"]
