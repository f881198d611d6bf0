"""The in-memory system: partitioned streams in this process. The embedded default and the test double.

Streams live in an :class:`InMemoryBroker` named by ``systems.<name>.inmemory.namespace`` (default: the
system's name), so a notebook or a test can put messages on a stream from Python and a job can read them.
Offsets are "0", "1", … per partition. Values pass through unchanged, as Python objects. A partition that
was ended (``end_stream``) is bounded: after its last message consumers read an end-of-stream envelope.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import threading
import zlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from samza_nb.api.metadata import SSPMetadata
from samza_nb.api.streams import (
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStreamPartition,
)
from samza_nb.errors import SamzaError, SystemConsumersError, SystemProducerError
from samza_nb.systems.offsets import compare_integer_offsets, integer_offset_after, parse_integer_offset

if TYPE_CHECKING:
    from samza_nb.config import Config


_partition_of = operator.attrgetter("partition")
_key_of = operator.attrgetter("key")
_message_of = operator.attrgetter("message")
_system_stream_of = operator.attrgetter("system_stream")


def stable_partition(key: Any, partitions: int) -> int:
    """A partition for ``key`` that is the same in every process (unlike ``hash`` of a str)."""
    if isinstance(key, bool):
        key = int(key)
    if isinstance(key, int):
        return key % partitions
    if isinstance(key, bytes):
        data = key
    elif isinstance(key, str):
        data = key.encode("utf-8")
    else:
        data = repr(key).encode("utf-8")
    return zlib.crc32(data) % partitions


class _Partition:
    """One partition: envelopes in offset order, and whether it has ended.

    Messages appended in batches wait as plain keys and values (``pending_*``) until something reads
    the partition's envelopes: a job's output then costs what its values cost, and the envelopes are
    built once, in bulk, by the first reader. Used under the broker's lock.
    """

    __slots__ = ("_envelopes", "ended", "pending_keys", "pending_messages", "ssp")

    def __init__(self, ssp: SystemStreamPartition) -> None:
        self.ssp = ssp
        self._envelopes: list[IncomingMessageEnvelope] = []
        self.pending_keys: list[Any] = []
        self.pending_messages: list[Any] = []
        self.ended = False

    @property
    def envelopes(self) -> list[IncomingMessageEnvelope]:
        """Every envelope, in offset order (the pending messages become envelopes now)."""
        envelopes = self._envelopes
        messages = self.pending_messages
        if messages:
            base = len(envelopes)
            envelopes.extend(
                map(
                    IncomingMessageEnvelope,
                    itertools.repeat(self.ssp),
                    map(str, range(base, base + len(messages))),
                    self.pending_keys,
                    messages,
                )
            )
            self.pending_keys = []
            self.pending_messages = []
        return envelopes

    def __len__(self) -> int:
        return len(self._envelopes) + len(self.pending_messages)


class InMemoryBroker:
    """Partitioned in-process streams, safe to write from any thread.

    ``InMemoryBroker.named(ns)`` returns the broker of a namespace, creating it on first use.
    """

    _registry: dict[str, InMemoryBroker] = {}
    _registry_lock = threading.Lock()

    def __init__(self, namespace: str, system: str | None = None) -> None:
        self.namespace = namespace
        self.system = system or namespace
        self._streams: dict[str, list[_Partition]] = {}
        self._lock = threading.Lock()
        self._round_robin: dict[str, itertools.count[int]] = {}
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []

    # -- registry ---------------------------------------------------------------------------------------
    @classmethod
    def named(cls, namespace: str, system: str | None = None) -> InMemoryBroker:
        """The broker of ``namespace`` (created empty on first use)."""
        with cls._registry_lock:
            broker = cls._registry.get(namespace)
            if broker is None:
                broker = cls._registry[namespace] = cls(namespace, system)
            return broker

    @classmethod
    def register(cls, broker: InMemoryBroker) -> None:
        """Make ``broker`` the broker of its namespace again (after a ``drop``)."""
        with cls._registry_lock:
            cls._registry[broker.namespace] = broker

    @classmethod
    def drop(cls, namespace: str) -> None:
        """Forget the broker of ``namespace`` and all its streams."""
        with cls._registry_lock:
            cls._registry.pop(namespace, None)

    # -- streams ----------------------------------------------------------------------------------------
    def create_stream(self, stream: str, partitions: int = 1) -> None:
        """Create ``stream`` with ``partitions`` partitions; an existing stream must have that many."""
        if not isinstance(partitions, int) or partitions < 1:
            raise SamzaError(f"stream {stream!r}: partitions must be an integer >= 1, got {partitions!r}")
        with self._lock:
            existing = self._streams.get(stream)
            if existing is not None:
                if len(existing) != partitions:
                    raise SamzaError(
                        f"stream {self.system}.{stream} exists with {len(existing)} partitions, "
                        f"not {partitions}"
                    )
                return
            self._streams[stream] = [
                _Partition(SystemStreamPartition(self.system, stream, p)) for p in range(partitions)
            ]

    def stream_names(self) -> list[str]:
        """The streams of this broker."""
        return sorted(self._streams)

    def has_stream(self, stream: str) -> bool:
        """True when ``stream`` exists."""
        return stream in self._streams

    def partition_count(self, stream: str) -> int:
        """How many partitions ``stream`` has."""
        return len(self._partitions(stream))

    def _partitions(self, stream: str) -> list[_Partition]:
        try:
            return self._streams[stream]
        except KeyError:
            known = ", ".join(sorted(self._streams)) or "none"
            raise SamzaError(
                f"in-memory system {self.system!r} has no stream {stream!r} (streams: {known})"
            ) from None

    def _partition(self, stream: str, partition: int) -> _Partition:
        parts = self._partitions(stream)
        if not isinstance(partition, int) or not 0 <= partition < len(parts):
            raise SystemProducerError(
                f"stream {self.system}.{stream} has partitions 0..{len(parts) - 1}; "
                f"partition {partition!r} does not exist"
            )
        return parts[partition]

    # -- writing ----------------------------------------------------------------------------------------
    def send(
        self,
        stream: str,
        message: Any,
        key: Any = None,
        partition: int | None = None,
        timestamp: int | None = None,
        partition_key: Any = None,
    ) -> str:
        """Append a message; returns its offset. Partition: ``partition``, else the stable hash of
        ``partition_key`` or ``key``, else round robin."""
        parts = self._partitions(stream)
        if partition is None:
            pkey = partition_key if partition_key is not None else key
            if pkey is not None:
                partition = stable_partition(pkey, len(parts))
            else:
                counter = self._round_robin.get(stream)
                if counter is None:
                    counter = self._round_robin.setdefault(stream, itertools.count())
                partition = next(counter) % len(parts)
        part = self._partition(stream, partition)
        with self._lock:
            if part.ended:
                raise SystemProducerError(f"{part.ssp} has ended; no message can follow its end-of-stream")
            offset = str(len(part.envelopes))
            part.envelopes.append(IncomingMessageEnvelope(part.ssp, offset, key, message, timestamp))
            waiters = self._waiters
            if waiters:
                self._waiters = []
        if waiters:
            self._notify(waiters)
        return offset

    def send_many(self, streams: Mapping[str, Sequence[OutgoingMessageEnvelope]]) -> None:
        """Append the messages of each stream's envelopes as :meth:`send` would one by one (partition
        chosen the same way), under one lock with offsets assigned per partition in bulk. All or nothing:
        when one cannot be appended (a partition that does not exist or has ended), none is."""
        placed = [
            (self._partitions(stream), self._place(stream, envelopes))
            for stream, envelopes in streams.items()
        ]
        with self._lock:
            for parts, by_partition in placed:
                for number in by_partition:
                    if parts[number].ended:
                        raise SystemProducerError(
                            f"{parts[number].ssp} has ended; no message can follow its end-of-stream"
                        )
            for parts, by_partition in placed:
                for number, batch in by_partition.items():
                    part = parts[number]
                    part.pending_keys.extend(map(_key_of, batch))
                    part.pending_messages.extend(map(_message_of, batch))
            waiters = self._waiters
            if waiters:
                self._waiters = []
        if waiters:
            self._notify(waiters)

    def _place(
        self, stream: str, envelopes: Sequence[OutgoingMessageEnvelope]
    ) -> Mapping[int, Sequence[OutgoingMessageEnvelope]]:
        """``envelopes`` by the partition :meth:`send` would choose for each, in order."""
        count = self.partition_count(stream)
        if count > 1:
            return self._spread(stream, envelopes, count)
        # Partition None or 0 (both false) for all, checked at C speed; else find the wrong one.
        if any(map(_partition_of, envelopes)):
            for envelope in envelopes:
                if envelope.partition is not None and envelope.partition != 0:
                    self._partition(stream, envelope.partition)  # raises, naming it
        return {0: envelopes}

    def _spread(
        self, stream: str, envelopes: Sequence[OutgoingMessageEnvelope], count: int
    ) -> dict[int, list[OutgoingMessageEnvelope]]:
        """``envelopes`` by the partition :meth:`send` would choose for each, in order."""
        by_partition: dict[int, list[OutgoingMessageEnvelope]] = {}
        counter = None
        for envelope in envelopes:
            partition = envelope.partition
            if partition is None:
                pkey = envelope.partition_key if envelope.partition_key is not None else envelope.key
                if pkey is not None:
                    partition = stable_partition(pkey, count)
                else:
                    if counter is None:
                        counter = self._round_robin.get(stream)
                        if counter is None:
                            counter = self._round_robin.setdefault(stream, itertools.count())
                    partition = next(counter) % count
            elif not isinstance(partition, int) or not 0 <= partition < count:
                self._partition(stream, partition)  # raises, naming it
            batch = by_partition.get(partition)
            if batch is None:
                batch = by_partition[partition] = []
            batch.append(envelope)
        return by_partition

    def send_all(self, stream: str, messages: Iterable[Any], partition: int | None = None) -> None:
        """Append plain values (no keys) to one partition (``partition``) or round robin."""
        for message in messages:
            self.send(stream, message, partition=partition)

    def end_stream(self, stream: str, partitions: Iterable[int] | None = None) -> None:
        """Mark partitions (default: all) of ``stream`` as ended: readers get end-of-stream after the last
        message."""
        parts = self._partitions(stream)
        selected = parts if partitions is None else [self._partition(stream, p) for p in partitions]
        with self._lock:
            for part in selected:
                part.ended = True
            waiters, self._waiters = self._waiters, []
        self._notify(waiters)

    @staticmethod
    def _notify(waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]]) -> None:
        for loop, event in waiters:
            if not loop.is_closed():
                loop.call_soon_threadsafe(event.set)

    # -- reading ----------------------------------------------------------------------------------------
    def read(self, stream: str) -> dict[int, list[Any]]:
        """The message values of every partition of ``stream``, in offset order."""
        parts = self._partitions(stream)
        with self._lock:
            return {
                number: [envelope.message for envelope in part.envelopes] for number, part in enumerate(parts)
            }

    def envelopes(
        self, ssp: SystemStreamPartition, start: int, limit: int | None = None
    ) -> tuple[list[IncomingMessageEnvelope], bool]:
        """Envelopes of ``ssp`` from offset index ``start`` (at most ``limit``), and whether the partition
        has ended after them."""
        part = self._partition(ssp.stream, ssp.partition)
        with self._lock:
            envelopes = part.envelopes
            end = len(envelopes) if limit is None else min(len(envelopes), start + limit)
            return envelopes[start:end], part.ended and end == len(envelopes)

    def metadata(self, stream: str) -> dict[int, SSPMetadata]:
        """oldest/newest/upcoming of every partition of ``stream``."""
        result = {}
        for number, part in enumerate(self._partitions(stream)):
            size = len(part)
            result[number] = SSPMetadata("0" if size else None, str(size - 1) if size else None, str(size))
        return result

    def add_waiter(self, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
        """Set ``event`` (on ``loop``) at the next write or end of any stream."""
        with self._lock:
            self._waiters.append((loop, event))


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
        self._broker.create_stream(stream, partitions)


class InMemorySystemConsumer:
    """Reads registered partitions of the broker; ``poll`` returns every available message, up to
    :attr:`MAX_POLL_BATCH` per partition."""

    MAX_POLL_BATCH = 4096
    """The most envelopes of one partition a poll returns: the container then processes envelopes while
    they are still in the CPU's cache (a poll of a million would touch each one first, and again later)."""

    def __init__(self, broker: InMemoryBroker) -> None:
        self._broker = broker
        self._positions: dict[SystemStreamPartition, int] = {}
        self._ended: set[SystemStreamPartition] = set()
        self._wakeup: asyncio.Event | None = None

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Start ``ssp`` at ``offset``."""
        self._broker.partition_count(ssp.stream)  # unknown stream → SamzaError naming it
        self._positions[ssp] = parse_integer_offset(ssp, offset, INMEMORY_OFFSET)

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
        """Nothing to disconnect."""


class InMemorySystemProducer:
    """Appends sent messages to the broker at once (flush has nothing left to do); takes batches
    (``send_batch``) in one append per partition."""

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
            partition_key=envelope.partition_key,
        )

    def send_batch(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> None:
        """``send`` of each of ``envelopes`` in order, appended in one go per stream and partition; all or
        nothing (streams are created first)."""
        if not envelopes:
            return
        first = envelopes[0].system_stream.stream
        streams: dict[str, Sequence[OutgoingMessageEnvelope]] = {first: envelopes}
        # One SystemStream object for all (the usual case), checked at C speed; else group by name.
        if len(set(map(id, map(_system_stream_of, envelopes)))) > 1:
            by_stream: dict[str, list[OutgoingMessageEnvelope]] = {}
            for envelope in envelopes:
                by_stream.setdefault(envelope.system_stream.stream, []).append(envelope)
            streams = dict(by_stream)
        broker = self._broker
        for stream in streams:
            if not broker.has_stream(stream):
                self._create(stream)
        broker.send_many(streams)

    def _create(self, stream: str) -> None:
        key = f"systems.{self._system}.streams.{stream}.partitions"
        self._broker.create_stream(stream, self._config.get_int(key, 1))

    async def flush(self, source: str) -> None:
        """Every send is already visible."""

    async def stop(self) -> None:
        """Nothing to disconnect."""


class InMemorySystemFactory:
    """``systems.<name>.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory``.

    ``systems.<name>.inmemory.namespace`` picks the broker (default: the system's name).
    """

    @staticmethod
    def broker(system_name: str, config: Config) -> InMemoryBroker:
        """The broker this system reads and writes."""
        namespace = config.get_str(f"systems.{system_name}.inmemory.namespace") or system_name
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
        """A consumer of ``system_name``."""
        return InMemorySystemConsumer(self.broker(system_name, config))

    def get_producer(self, system_name: str, config: Config) -> InMemorySystemProducer:
        """A producer of ``system_name``."""
        return InMemorySystemProducer(self.broker(system_name, config), config, system_name)
