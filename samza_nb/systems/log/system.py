"""The durable log as a system: admin, consumer and producer over a :class:`DurableLog` directory.

``systems.<name>.samza.factory = samza_nb.systems.log.LogSystemFactory``; the directory is
``systems.<name>.log.dir`` (default ``<job.logged.store.base.dir>/log``). The system named ``log`` is
this one when no factory is configured for it.

- Offsets are "0", "1", ... per partition, compared as integers. Partitions are unbounded: no end-of-stream.
  A partition whose checkpoint is past the log's end (the log was recreated shorter) is read per
  ``samza.offset.default`` when that is set and the move is reported; unset, it is a one-line error.
- Messages are bytes. Without a serde the producer stores bytes unchanged and str as UTF-8 (a None
  message is a tombstone, a None key no key) and refuses anything else, naming the stream; the consumer
  hands out the stored bytes as key and message, with the sent envelope's ``timestamp`` (event time, ms)
  as the timestamp, or the append time (ms) for a message sent without one, and the sent envelope's
  ``headers`` (``(name, bytes or None)`` pairs; other values are refused naming the stream). The serdes
  of Kafka apply here too (:mod:`samza_nb.serde.streams`: ``systems.<name>.samza.key.serde`` /
  ``samza.msg.serde``, per stream ``systems.<name>.streams.<stream>.samza.*.serde``; store changelogs stay
  bytes): values are serialized when the producer writes them and deserialized by the consumer.
- Partition of a sent message: ``partition``, else Kafka's murmur2 of ``partition_key`` (or ``key``),
  else round robin. A stream written for the first time is created with
  ``systems.<name>.streams.<stream>.partitions`` partitions (default 1).
- ``producer.flush`` (before every checkpoint) writes what was sent and fsyncs it; consumers see a
  message only once it is flushed, and a consumer waiting in ``poll`` is woken by the flush itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import islice, repeat
from typing import TYPE_CHECKING, Any

from samza_nb.api.metadata import OffsetReset, SSPMetadata
from samza_nb.api.streams import (
    IncomingMessageEnvelope,
    SystemStreamPartition,
)
from samza_nb.config.system_defaults import log_directory
from samza_nb.errors import SamzaError, SystemConsumersError
from samza_nb.serde.streams import StreamSerdes, is_identity
from samza_nb.systems.log.durable_log import LOG_OFFSET, DurableLog
from samza_nb.systems.log.producer import LogSystemProducer
from samza_nb.systems.log.wake import FlushWaiter
from samza_nb.systems.offsets import (
    compare_integer_offsets,
    integer_offset_after,
    parse_integer_offset,
    reset_past_end,
)

if TYPE_CHECKING:
    from samza_nb.config import Config

Decoder = Callable[[bytes], Any]
"""A serde's ``from_bytes``."""


class LogSystemAdmin:
    """Admin of a durable log system: metadata from the flush marks; integer offset order."""

    def __init__(self, log: DurableLog, system: str) -> None:
        self.log = log
        self.system = system

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """oldest/newest/upcoming of every partition of ``streams`` (flushed records only); an unknown
        stream is a SamzaError naming it."""
        result: dict[str, dict[int, SSPMetadata]] = {}
        for stream in streams:
            partitions: dict[int, SSPMetadata] = {}
            for number in range(self.log.partitions(stream)):
                upcoming = self.log.upcoming(stream, number)
                if upcoming:
                    partitions[number] = SSPMetadata("0", str(upcoming - 1), str(upcoming))
                else:
                    partitions[number] = SSPMetadata(None, None, "0")
            result[stream] = partitions
        return result

    def offset_comparator(self, a: str, b: str) -> int:
        """Integer order ("2" < "10"); end-of-stream sorts last."""
        return compare_integer_offsets(a, b)

    def offset_after(self, offset: str) -> str:
        """The next integer offset."""
        return integer_offset_after(f"system {self.system!r}", offset, LOG_OFFSET)

    async def create_stream(self, stream: str, partitions: int) -> None:
        """Create ``stream`` unless it exists with ``partitions`` partitions (another count: SamzaError)."""
        self.log.create_stream(stream, partitions)

    async def create_changelog_stream(self, stream: str, partitions: int) -> None:
        """Create changelog ``stream``; an existing one must have ``partitions`` partitions."""
        self.log.create_stream(stream, partitions)


class LogSystemConsumer:
    """Reads registered partitions from their starting offsets; ``poll`` returns up to
    :attr:`MAX_POLL_BATCH` flushed messages per partition and otherwise waits for a flush.

    Given the job's ``config``, a partition whose starting offset is past the log's end at start (the log
    was recreated shorter than the job's checkpoint) is read per ``samza.offset.default`` when set and
    reported (:meth:`take_resets`), else refused (:func:`reset_past_end`); without it (a log fed while the
    job reads it) such a partition waits for its offset to be written."""

    MAX_POLL_BATCH = 4096

    def __init__(
        self, log: DurableLog, system: str, serdes: StreamSerdes, config: Config | None = None
    ) -> None:
        self.log = log
        self.system = system
        self._serdes = serdes
        self._config = config
        self._resets: list[OffsetReset] = []
        self._decoders: dict[str, tuple[Decoder | None, Decoder | None]] = {}
        self._positions: dict[SystemStreamPartition, int] = {}
        self._pending: dict[SystemStreamPartition, list[IncomingMessageEnvelope]] = {}
        self._waiter: FlushWaiter | None = None  # made by the first poll that has to wait
        self._watching = False  # between start and stop: polls may wait for flushes

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from ``offset``."""
        self._positions[ssp] = parse_integer_offset(ssp, offset, LOG_OFFSET)

    async def start(self) -> None:
        """Check every registered partition exists (a SystemConsumersError naming one that does not).
        Their flushes are watched from the first poll that finds nothing to return: a reader that finds
        what it reads already flushed (a coordinator stream read to its end) never sets up a watch."""
        for ssp in self._positions:
            try:
                count = self.log.partitions(ssp.stream)
            except SamzaError as exc:
                raise SystemConsumersError(f"input {ssp}: {exc}") from None
            if ssp.partition >= count:
                raise SystemConsumersError(f"input {ssp}: stream {ssp.stream!r} has only {count} partitions")
            end = self.log.upcoming(ssp.stream, ssp.partition)
            if self._config is not None and self._positions[ssp] > end:
                reset = reset_past_end(self._config, ssp, self._positions[ssp], end, "the log")
                self._positions[ssp] = int(reset.to_offset)
                self._resets.append(reset)
        self._watching = True

    def take_resets(self) -> Sequence[OffsetReset]:
        """The partitions moved at start because the log is shorter than their starting offset."""
        if not self._resets:
            return ()
        taken, self._resets = self._resets, []
        return taken

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The next flushed messages of ``ssps`` in offset order, waiting up to ``timeout`` seconds for a
        flush when there are none."""
        result = self._collect(ssps)
        if result or timeout <= 0 or not self._watching:
            return result
        if self._waiter is None:
            self._waiter = self.log.waiter([(ssp.stream, ssp.partition) for ssp in self._positions])
            result = self._collect(ssps)  # a flush since the look above: seen now (later ones wake it)
            if result:
                return result
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not result:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            await self._waiter.wait_async(remaining)
            result = self._collect(ssps)
        return result

    def _collect(
        self, ssps: Collection[SystemStreamPartition]
    ) -> dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        result: dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = {}
        limit = self.MAX_POLL_BATCH
        for ssp in ssps:
            envelopes = self._pending.pop(ssp, None) or self._read(ssp)
            if len(envelopes) > limit:
                self._pending[ssp] = envelopes[limit:]
                envelopes = envelopes[:limit]
            if envelopes:
                result[ssp] = envelopes
        return result

    def _read(self, ssp: SystemStreamPartition) -> list[IncomingMessageEnvelope]:
        try:
            position = self._positions[ssp]
        except KeyError:
            raise SystemConsumersError(f"{ssp} was never registered with this consumer") from None
        envelopes: list[IncomingMessageEnvelope] = []
        key_decoder, msg_decoder = self._decoders_of(ssp.stream)
        for batch in self.log.batches(ssp.stream, ssp.partition, position):
            skip = position - batch.base
            end = batch.base + len(batch.values)
            keys: Any = repeat(None) if batch.keys is None else islice(batch.keys, skip, None)
            values: Any = islice(batch.values, skip, None) if skip else batch.values
            if key_decoder is not None and batch.keys is not None:
                keys = _decoded(keys, key_decoder, ssp, position)
            if msg_decoder is not None:
                values = _decoded(values, msg_decoder, ssp, position)
            appended, column = batch.timestamp, batch.timestamps
            stamps: Iterable[int | None] = repeat(appended)
            if column is not None:
                if None in column:
                    stamps = [appended if ts is None else ts for ts in islice(column, skip, None)]
                else:
                    stamps = islice(column, skip, None) if skip else column
            offsets = map(str, range(position, end))
            if batch.headers is None:
                envelopes.extend(map(IncomingMessageEnvelope, repeat(ssp), offsets, keys, values, stamps))
            else:
                headers = islice(batch.headers, skip, None)
                envelopes.extend(
                    map(IncomingMessageEnvelope, repeat(ssp), offsets, keys, values, stamps, headers)
                )
            position = end
            if len(envelopes) >= self.MAX_POLL_BATCH:
                break
        self._positions[ssp] = position
        return envelopes

    def _decoders_of(self, stream: str) -> tuple[Decoder | None, Decoder | None]:
        decoders = self._decoders.get(stream)
        if decoders is None:
            key, msg = self._serdes.key_serde(stream), self._serdes.msg_serde(stream)
            decoders = self._decoders[stream] = (
                None if is_identity(key) else key.from_bytes,
                None if is_identity(msg) else msg.from_bytes,
            )
        return decoders

    async def stop(self) -> None:
        """Stop watching and close the files."""
        self._watching = False
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            waiter.close()
        self.log.close()


def _decoded(
    items: Iterable[bytes | None], decode: Decoder, ssp: SystemStreamPartition, first: int
) -> list[Any]:
    """``items`` through ``decode`` (None stays None); a SystemConsumersError naming the offset."""
    result = []
    for offset, item in enumerate(items, first):
        try:
            result.append(None if item is None else decode(item))
        except SamzaError as exc:
            raise SystemConsumersError(f"{ssp} offset {offset}: {exc}") from None
        except Exception as exc:  # a user serde's own error
            raise SystemConsumersError(
                f"{ssp} offset {offset}: the serde could not decode {_short(item)}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    return result


def _short(item: bytes | None, limit: int = 60) -> str:
    text = repr(item)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class LogSystemFactory:
    """``systems.<name>.samza.factory = samza_nb.systems.log.LogSystemFactory``; the directory is
    ``systems.<name>.log.dir`` (default ``<job.logged.store.base.dir>/log``)."""

    @staticmethod
    def durable_log(system_name: str, config: Config) -> DurableLog:
        """A new handle of the directory of ``system_name``."""
        return DurableLog(log_directory(config, system_name))

    def get_admin(self, system_name: str, config: Config) -> LogSystemAdmin:
        """The admin of ``system_name``."""
        return LogSystemAdmin(self.durable_log(system_name, config), system_name)

    def get_consumer(self, system_name: str, config: Config) -> LogSystemConsumer:
        """A consumer of ``system_name``."""
        serdes = StreamSerdes(config, system_name)
        return LogSystemConsumer(self.durable_log(system_name, config), system_name, serdes, config)

    def get_producer(self, system_name: str, config: Config) -> LogSystemProducer:
        """A producer of ``system_name``."""
        serdes = StreamSerdes(config, system_name)
        return LogSystemProducer(self.durable_log(system_name, config), config, system_name, serdes)


__all__ = ["LOG_OFFSET", "LogSystemAdmin", "LogSystemConsumer", "LogSystemFactory", "LogSystemProducer"]
