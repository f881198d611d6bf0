"""InMemoryBroker: partitioned streams held in this process, in named namespaces (the in-memory system's
storage). Offsets are "0", "1", … per partition; values pass through unchanged, as Python objects; a
partition that was ended is bounded. Safe to write from any thread; a write wakes waiting readers.

``create_stream(name, n)`` on a stream that holds messages or has ended makes it anew (no messages, not
ended) with a one-line note, so a notebook's data cell that fills and ends a stream can run again (Run All
twice): an in-memory stream no running job reads holds nothing to lose. ``replace=True`` makes it anew
in any case, without the note. Not while a running job reads it (its consumers say so:
:meth:`InMemoryBroker.add_reader`): that is a :class:`StreamInUseError` naming the stream and the job.
The system's own streams (outputs, changelogs, intermediate streams) are made with :meth:`ensure_stream`,
which keeps an existing stream as it is. Each stream made has its own :meth:`~InMemoryBroker.incarnation`,
so whoever kept offsets of a stream (a notebook's checkpoints) can tell they belong to one that is gone.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from samza_nb.api.metadata import SSPMetadata
from samza_nb.api.streams import (
    NO_HEADERS,
    Headers,
    IncomingMessageEnvelope,
    OutgoingMessageEnvelope,
    SystemStream,
    SystemStreamPartition,
)
from samza_nb.errors import SamzaError, StreamInUseError, SystemProducerError
from samza_nb.systems.headers import checked_headers
from samza_nb.systems.inmemory.partition import InMemoryPartition, stable_partition

_partition_of = operator.attrgetter("partition")
_headers_of = operator.attrgetter("headers")


class InMemoryBroker:
    """Partitioned in-process streams, safe to write from any thread.

    ``InMemoryBroker.named(ns)`` returns the broker of a namespace, creating it on first use.
    """

    _registry: dict[str, InMemoryBroker] = {}
    _registry_lock = threading.Lock()
    _incarnations = itertools.count(1)  # every stream made, in any broker, has its own number

    def __init__(self, namespace: str, system: str | None = None) -> None:
        self.namespace = namespace
        self.system = system or namespace
        self._streams: dict[str, list[InMemoryPartition]] = {}
        self._incarnation: dict[str, int] = {}
        self._readers: dict[str, list[str]] = {}  # stream → the running jobs reading it (one per partition)
        self._lock = threading.Lock()
        self._round_robin: dict[str, itertools.count[int]] = {}
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._offset_strings: list[str] = []  # "0", "1", ...: every partition's offsets, made once

    def _offsets(self, start: int, end: int) -> list[str]:
        """The offset strings of offsets ``start`` to ``end`` (exclusive), under the lock."""
        strings = self._offset_strings
        if end > len(strings):
            strings.extend(map(str, range(len(strings), end)))
        return strings[start:end]

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
    def create_stream(self, stream: str, partitions: int = 1, *, replace: bool = False) -> None:
        """Create ``stream`` with ``partitions`` partitions, as a data cell does. An existing stream that is
        as a new one would be (no messages, not ended, ``partitions`` partitions) is kept; any other is made
        anew (no messages, not ended, ``partitions`` partitions) and a one-line note says what was dropped,
        so the cell can run again; ``replace``: made anew in any case, without a note. A stream a running
        job reads is never made anew: a :class:`StreamInUseError` naming it and the job."""
        _check_partitions(stream, partitions)
        note = None
        with self._lock:
            existing = self._streams.get(stream)
            if existing is not None:
                pristine = len(existing) == partitions and not any(
                    len(part) or part.ended for part in existing
                )
                readers = self._readers.get(stream)
                if readers and (replace or not pristine):
                    jobs = " and ".join(f"job {job!r}" for job in sorted(set(readers)))
                    raise StreamInUseError(
                        f"in-memory stream {self.system}.{stream} cannot be recreated while running {jobs} "
                        f"reads it: stop the job first"
                    )
                if pristine and not replace:
                    return
                if not replace:
                    note = self._anew_note(stream, existing)
            self._make(stream, partitions)
        if note is not None:
            print(note, flush=True)

    def ensure_stream(self, stream: str, partitions: int = 1) -> None:
        """Create ``stream`` with ``partitions`` partitions if missing (the system's own streams: outputs,
        changelogs, intermediate streams); an existing stream is kept as it is and must have that many."""
        _check_partitions(stream, partitions)
        with self._lock:
            existing = self._streams.get(stream)
            if existing is None:
                self._make(stream, partitions)
            elif len(existing) != partitions:
                raise SamzaError(
                    f"stream {self.system}.{stream} exists with {len(existing)} partitions, not {partitions}"
                )

    def _make(self, stream: str, partitions: int) -> None:
        """Make ``stream`` (anew), under the lock."""
        self._streams[stream] = [
            InMemoryPartition(SystemStreamPartition(self.system, stream, p)) for p in range(partitions)
        ]
        self._incarnation[stream] = next(self._incarnations)
        self._round_robin.pop(stream, None)

    def _anew_note(self, stream: str, existing: list[InMemoryPartition]) -> str:
        """The line telling that ``stream`` (its partitions ``existing``) is made anew, under the lock."""
        count = sum(map(len, existing))
        return (
            f"in-memory stream {self.system}.{stream} made anew (no running job reads it): "
            f"its {count} old message{'' if count == 1 else 's'} dropped"
        )

    def incarnation(self, stream: str) -> int:
        """The number of ``stream`` as it is now: a stream made anew (``replace``) has another one."""
        self._partitions(stream)  # unknown stream → SamzaError naming it
        return self._incarnation[stream]

    def add_reader(self, stream: str, job: str) -> None:
        """Job ``job`` reads (a partition of) ``stream`` from now on: the stream cannot be replaced until
        a matching :meth:`remove_reader`."""
        with self._lock:
            self._readers.setdefault(stream, []).append(job)

    def remove_reader(self, stream: str, job: str) -> None:
        """Job ``job`` no longer reads (that partition of) ``stream``."""
        with self._lock:
            readers = self._readers.get(stream)
            if readers and job in readers:
                readers.remove(job)

    def readers(self, stream: str) -> list[str]:
        """The running jobs that read ``stream`` (once each, sorted)."""
        with self._lock:
            return sorted(set(self._readers.get(stream, ())))

    def stream_names(self) -> list[str]:
        """The streams of this broker."""
        return sorted(self._streams)

    def has_stream(self, stream: str) -> bool:
        """True when ``stream`` exists."""
        return stream in self._streams

    def partition_count(self, stream: str) -> int:
        """How many partitions ``stream`` has."""
        return len(self._partitions(stream))

    def _partitions(self, stream: str) -> list[InMemoryPartition]:
        try:
            return self._streams[stream]
        except KeyError:
            known = ", ".join(sorted(self._streams)) or "none"
            raise SamzaError(
                f"in-memory system {self.system!r} has no stream {stream!r} (streams: {known})"
            ) from None

    def _partition(self, stream: str, partition: int) -> InMemoryPartition:
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
        headers: Headers = NO_HEADERS,
    ) -> str:
        """Append a message; returns its offset. Partition: ``partition``, else the stable hash of
        ``partition_key`` or ``key``, else round robin. ``headers``: ``(name, value)`` pairs, name a str
        and value bytes or None (else a SystemProducerError naming the stream)."""
        parts = self._partitions(stream)
        if headers:
            headers = checked_headers(headers, f"{self.system}.{stream}")
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
                raise SystemProducerError(self._ended_message(part))
            number = len(part)
            offset = self._offsets(number, number + 1)[0]
            part.append(offset, key, message, timestamp, headers)
            waiters = self._waiters
            if waiters:
                self._waiters = []
        if waiters:
            self._notify(waiters)
        return offset

    def send_many(
        self, streams: Mapping[str, Sequence[OutgoingMessageEnvelope]], plain: bool = False
    ) -> None:
        """Append the messages of each stream's envelopes as :meth:`send` would one by one (partition
        chosen the same way), under one lock with offsets assigned per partition in bulk. All or nothing:
        when one cannot be appended (a partition that does not exist or has ended), none is. ``plain``:
        the caller found that no envelope names a partition or has headers (:func:`plain_batch`)."""
        placed = [
            (self._partitions(stream), self._place(stream, envelopes, plain))
            for stream, envelopes in streams.items()
        ]
        headers = {} if plain else self._checked_headers(streams)
        with self._lock:
            for parts, by_partition in placed:
                for number in by_partition:
                    if parts[number].ended:
                        raise SystemProducerError(self._ended_message(parts[number]))
            for parts, by_partition in placed:
                for number, batch in by_partition.items():
                    parts[number].extend(batch, headers)
            waiters = self._waiters
            if waiters:
                self._waiters = []
        if waiters:
            self._notify(waiters)

    def send_values(self, stream: str, messages: Sequence[Any]) -> None:
        """Append ``messages`` (no keys, timestamps or headers) as :meth:`send_many` would their envelopes:
        to the one partition of a stream of one, else round robin; all or nothing."""
        parts = self._partitions(stream)
        if len(parts) > 1:
            outgoing = SystemStream(self.system, stream)
            self.send_many({stream: [OutgoingMessageEnvelope(outgoing, m) for m in messages]}, plain=True)
            return
        with self._lock:
            if parts[0].ended:
                raise SystemProducerError(self._ended_message(parts[0]))
            parts[0].extend_values(messages)
            waiters = self._waiters
            if waiters:
                self._waiters = []
        if waiters:
            self._notify(waiters)

    def _ended_message(self, part: InMemoryPartition) -> str:
        stream = part.ssp.stream
        count = len(self._streams[stream])
        return (
            f"{part.ssp} has ended; no message can follow its end-of-stream "
            f"(create_stream({stream!r}, {count}) makes the stream anew)"
        )

    def _checked_headers(
        self, streams: Mapping[str, Sequence[OutgoingMessageEnvelope]]
    ) -> dict[int, Headers]:
        """The checked headers of the envelopes that have some, by ``id`` of the envelope (one pass at C
        speed finds there are none)."""
        result: dict[int, Headers] = {}
        for stream, envelopes in streams.items():
            if any(map(_headers_of, envelopes)):
                where = f"{self.system}.{stream}"
                for envelope in envelopes:
                    if envelope.headers:
                        result[id(envelope)] = checked_headers(envelope.headers, where)
        return result

    def _place(
        self, stream: str, envelopes: Sequence[OutgoingMessageEnvelope], plain: bool
    ) -> Mapping[int, Sequence[OutgoingMessageEnvelope]]:
        """``envelopes`` by the partition :meth:`send` would choose for each, in order (``plain``: none
        names a partition)."""
        count = self.partition_count(stream)
        if count > 1:
            return self._spread(stream, envelopes, count)
        # Partition None or 0 (both false) for all, checked at C speed; else find the wrong one.
        if not plain and any(map(_partition_of, envelopes)):
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
            return {number: part.values() for number, part in enumerate(parts)}

    def envelopes(
        self, ssp: SystemStreamPartition, start: int, limit: int | None = None
    ) -> tuple[list[IncomingMessageEnvelope], bool]:
        """Envelopes of ``ssp`` from offset index ``start`` (at most ``limit``), and whether the partition
        has ended after them."""
        part = self._partition(ssp.stream, ssp.partition)
        with self._lock:
            size = len(part)
            end = size if limit is None else min(size, start + limit)
            return part.envelopes(start, end, self._offsets), part.ended and end == size

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


def _check_partitions(stream: str, partitions: int) -> None:
    if not isinstance(partitions, int) or partitions < 1:
        raise SamzaError(f"stream {stream!r}: partitions must be an integer >= 1, got {partitions!r}")
