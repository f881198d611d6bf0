"""The in-memory system: partitioned streams in this process. The embedded default and the test double.

Streams live in an :class:`InMemoryBroker` named by ``systems.<name>.inmemory.namespace`` (default: the
system's name), so a notebook or a test can put messages on a stream from Python and a job can read them.
Offsets are "0", "1", … per partition. Values pass through unchanged, as Python objects, with their
headers (``(name, bytes)`` pairs). A partition that was ended (``end_stream``) is bounded: after its last
message consumers read an end-of-stream envelope.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from samza_nb.api.metadata import SSPMetadata
from samza_nb.api.streams import (
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStream,
    SystemStreamPartition,
)
from samza_nb.errors import SamzaError, SystemConsumersError
from samza_nb.systems.inmemory.broker import InMemoryBroker
from samza_nb.systems.inmemory.partition import plain_batch, stable_partition
from samza_nb.systems.offsets import compare_integer_offsets, integer_offset_after, parse_integer_offset

if TYPE_CHECKING:
    from samza_nb.config import Config


_system_stream_of = operator.attrgetter("system_stream")

INMEMORY_OFFSET = "an in-memory offset (expected 0, 1, ...)"
"""What an offset of this system is, for errors about one."""


class InMemorySystemAdmin:
    """Admin of an in-memory system: metadata straight from the broker; integer offset order."""

    def __init__(self, broker: InMemoryBroker, config: Config, system: str) -> None:
        self._broker = broker
        self._config = config
        self._system = system

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """Partition metadata of ``streams``; an unknown stream is a SamzaError naming it."""
        return {stream: self._broker.metadata(stream) for stream in streams}

    def offset_comparator(self, a: str, b: str) -> int:
        """Integer order ("2" < "10"); end-of-stream sorts last."""
        return compare_integer_offsets(a, b)

    def offset_after(self, offset: str) -> str:
        """The next integer offset."""
        return integer_offset_after(f"system {self._system!r}", offset, INMEMORY_OFFSET)

    async def create_stream(self, stream: str, partitions: int) -> None:
        """Create ``stream`` if missing."""
        self._broker.ensure_stream(stream, partitions)


class InMemorySystemConsumer:
    """Reads registered partitions of the broker; ``poll`` returns every available message, up to
    :attr:`MAX_POLL_BATCH` per partition. From ``register`` to ``stop`` the broker knows job ``job`` reads
    those streams (they cannot be made anew meanwhile)."""

    MAX_POLL_BATCH = 4096
    """The most envelopes of one partition a poll returns: the container then processes envelopes while
    they are still in the CPU's cache (a poll of a million would touch each one first, and again later)."""

    def __init__(self, broker: InMemoryBroker, job: str = "a job") -> None:
        self._broker = broker
        self._job = job
        self._reading: set[SystemStreamPartition] = set()  # told to the broker as read by the job
        self._positions: dict[SystemStreamPartition, int] = {}
        self._ended: set[SystemStreamPartition] = set()
        self._wakeup: asyncio.Event | None = None

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Start ``ssp`` at ``offset``."""
        self._broker.partition_count(ssp.stream)  # unknown stream → SamzaError naming it
        self._positions[ssp] = parse_integer_offset(ssp, offset, INMEMORY_OFFSET)
        if ssp not in self._reading:
            self._reading.add(ssp)
            self._broker.add_reader(ssp.stream, self._job)

    async def start(self) -> None:
        """Nothing to connect."""
        self._wakeup = asyncio.Event()

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """Every available envelope of ``ssps``, up to MAX_POLL_BATCH per partition (plus end-of-stream after
        the last of an ended partition),
        waiting up to ``timeout`` seconds when there is none."""
        result = self._collect(ssps)
        if result or timeout <= 0:
            return result
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        self._broker.add_waiter(loop, event)
        result = self._collect(ssps)  # a write may have landed before the waiter was added
        if result:
            return result
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            return {}
        return self._collect(ssps)

    def _collect(
        self, ssps: Collection[SystemStreamPartition]
    ) -> dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        result: dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = {}
        for ssp in ssps:
            if ssp in self._ended:
                continue
            try:
                start = self._positions[ssp]
            except KeyError:
                raise SystemConsumersError(f"{ssp} was never registered with this consumer") from None
            batch, ended = self._broker.envelopes(ssp, start, self.MAX_POLL_BATCH)
            if batch:
                self._positions[ssp] = start + len(batch)
            if ended:
                self._ended.add(ssp)
                batch.append(IncomingMessageEnvelope.end_of_stream(ssp))
            if batch:
                result[ssp] = batch
        return result

    async def stop(self) -> None:
        """The job no longer reads its streams (nothing to disconnect)."""
        reading, self._reading = self._reading, set()
        for ssp in reading:
            self._broker.remove_reader(ssp.stream, self._job)


class InMemorySystemProducer:
    """Appends sent messages to the broker at once (flush has nothing left to do); takes batches
    (``send_batch``) in one append per partition, and plain values (``send_values``) as they are."""

    def __init__(self, broker: InMemoryBroker, config: Config, system: str) -> None:
        self._broker = broker
        self._config = config
        self._system = system

    async def start(self) -> None:
        """Nothing to connect."""

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Append ``envelope`` to its stream, creating the stream on first use with
        ``systems.<system>.streams.<stream>.partitions`` partitions (default 1)."""
        stream = envelope.system_stream.stream
        broker = self._broker
        if not broker.has_stream(stream):
            self._create(stream)
        broker.send(
            stream,
            envelope.message,
            key=envelope.key,
            partition=envelope.partition,
            timestamp=envelope.timestamp,
            partition_key=envelope.partition_key,
            headers=envelope.headers,
        )

    def send_batch(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> None:
        """``send`` of each of ``envelopes`` in order, appended in one go per stream and partition; all or
        nothing (streams are created first)."""
        if not envelopes:
            return
        first_stream = envelopes[0].system_stream
        streams: dict[str, Sequence[OutgoingMessageEnvelope]] = {first_stream.stream: envelopes}
        # One SystemStream object for all, no partitions, no headers (the usual case): one check for all.
        plain = plain_batch(envelopes, first_stream)
        if not plain and not all(
            map(operator.is_, map(_system_stream_of, envelopes), itertools.repeat(first_stream))
        ):  # else group by stream name
            by_stream: dict[str, list[OutgoingMessageEnvelope]] = {}
            for envelope in envelopes:
                by_stream.setdefault(envelope.system_stream.stream, []).append(envelope)
            streams = dict(by_stream)
        broker = self._broker
        for stream in streams:
            if not broker.has_stream(stream):
                self._create(stream)
        broker.send_many(streams, plain)

    def send_values(self, stream: SystemStream, messages: Sequence[Any]) -> None:
        """``send_batch`` of ``OutgoingMessageEnvelope(stream, message)`` for each of ``messages``, without
        the envelopes (the stream is created first); all or nothing."""
        broker = self._broker
        if not broker.has_stream(stream.stream):
            self._create(stream.stream)
        broker.send_values(stream.stream, messages)

    def _create(self, stream: str) -> None:
        key = f"systems.{self._system}.streams.{stream}.partitions"
        self._broker.ensure_stream(stream, self._config.get_int(key, 1))

    async def flush(self, source: str) -> None:
        """Every send is already visible."""

    async def stop(self) -> None:
        """Nothing to disconnect."""


class InMemorySystemFactory:
    """``systems.<name>.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory``.

    ``systems.<name>.inmemory.namespace`` picks the broker (default: the system's name). An
    :class:`~samza_nb.systems.base.InProcessSystemFactory`: its streams carry Python objects and live in this
    process only.
    """

    @staticmethod
    def namespace(system_name: str, config: Config) -> str:
        """The broker's name: ``systems.<name>.inmemory.namespace``, else the system's name."""
        return config.get_str(f"systems.{system_name}.inmemory.namespace") or system_name

    @staticmethod
    def broker(system_name: str, config: Config) -> InMemoryBroker:
        """The broker this system reads and writes."""
        namespace = InMemorySystemFactory.namespace(system_name, config)
        broker = InMemoryBroker.named(namespace, system_name)
        if broker.system != system_name:
            if any(True for _ in broker.stream_names()):
                raise SamzaError(
                    f"in-memory system {system_name!r} reads namespace {namespace!r}, whose streams were "
                    f"created for system {broker.system!r}: create the broker with "
                    f"InMemoryBroker.named({namespace!r}, system={system_name!r})"
                )
            broker.system = system_name
        return broker

    def get_admin(self, system_name: str, config: Config) -> InMemorySystemAdmin:
        """The admin of ``system_name``."""
        return InMemorySystemAdmin(self.broker(system_name, config), config, system_name)

    def get_consumer(self, system_name: str, config: Config) -> InMemorySystemConsumer:
        """A consumer of ``system_name`` for the job of ``config`` (``job.name``)."""
        return InMemorySystemConsumer(self.broker(system_name, config), config.job_name())

    def get_producer(self, system_name: str, config: Config) -> InMemorySystemProducer:
        """A producer of ``system_name``."""
        return InMemorySystemProducer(self.broker(system_name, config), config, system_name)


__all__ = [
    "INMEMORY_OFFSET",
    "InMemoryBroker",
    "InMemorySystemAdmin",
    "InMemorySystemConsumer",
    "InMemorySystemFactory",
    "InMemorySystemProducer",
    "stable_partition",
]
