"""The durable log system's producer: sent messages appended to a :class:`DurableLog` in batches, durable and
visible after ``flush`` (see :mod:`samza_nb.systems.log.system` for the system's rules)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import Headers, OutgoingMessageEnvelope
from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.serde.streams import StreamSerdes, is_identity
from samza_nb.systems.headers import checked_headers
from samza_nb.systems.log.durable_log import DurableLog, Record
from samza_nb.systems.log.format import as_bytes
from samza_nb.systems.partitioner import key_partition

if TYPE_CHECKING:
    from samza_nb.config import Config

_timestamp_of = attrgetter("timestamp")
_headers_of = attrgetter("headers")

Encoder = Callable[[Any], bytes] | None
"""A serde's ``to_bytes``, or None to store values as given."""


class LogSystemProducer:
    """Appends sent messages to the durable log; ``flush`` makes them durable and visible. Thread-safe;
    takes batches (``send_batch``)."""

    WRITE_AT = 16384
    """Messages sent since the last write that trigger a write (not yet a flush)."""

    def __init__(self, log: DurableLog, config: Config, system: str, serdes: StreamSerdes) -> None:
        self.log = log
        self._config = config
        self.system = system
        self._serdes = serdes
        self._lock = threading.Lock()
        self._pending: list[OutgoingMessageEnvelope] = []

    async def start(self) -> None:
        """Nothing to connect."""

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Queue ``envelope``; it is written within :attr:`WRITE_AT` messages and durable after flush."""
        with self._lock:
            self._pending.append(envelope)
            if len(self._pending) >= self.WRITE_AT:
                self._write()

    def send_batch(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> None:
        """``send`` of each of ``envelopes``, in order; all or nothing: when the write it triggers fails
        (a message its serde refuses), none of them stays queued."""
        with self._lock:
            before = len(self._pending)
            self._pending.extend(envelopes)
            if len(self._pending) >= self.WRITE_AT:
                try:
                    self._write()
                except SystemProducerError:
                    del self._pending[before:]
                    raise

    def _write(self) -> None:
        """Under the lock: append the pending messages, stream by stream; they stay pending on error."""
        pending = self._pending
        if not pending:
            return
        by_stream: dict[str, list[Record]] = {}
        encoders: dict[str, tuple[Encoder, Encoder]] = {}
        try:
            for envelope in pending:
                stream = envelope.system_stream.stream
                records = by_stream.get(stream)
                if records is None:
                    self._ensure(stream)
                    records = by_stream[stream] = []
                    encoders[stream] = self._encoders(stream)
                encode_key, encode_msg = encoders[stream]
                plain_key = key = envelope.key
                message, partition = envelope.message, envelope.partition
                if key is not None and encode_key is not None:
                    key = encode_key(key)
                if message is not None and encode_msg is not None:
                    message = encode_msg(message)
                if partition is None and envelope.partition_key is not None:
                    raw = envelope.partition_key
                    if raw is plain_key:  # keyed by its own key (partition_by): encoded once
                        raw = key
                    elif encode_key is not None:
                        raw = encode_key(raw)
                    raw = as_bytes(raw, "a partition key")
                    assert raw is not None
                    count = self.log.partitions(stream)
                    partition = 0 if count == 1 else key_partition(raw, count)
                records.append((key, message, partition))
            several = len(by_stream) > 1
            stamps = _timestamps(pending, several)
            headers = _headers(pending, several, self.system)
            for stream, records in by_stream.items():
                try:
                    self.log.send_batch(
                        stream,
                        records,
                        None if stamps is None else stamps[stream],
                        None if headers is None else headers[stream],
                    )
                except SamzaError as exc:
                    raise SamzaError(f"stream {stream!r}: {exc}") from exc
        except SamzaError as exc:
            raise SystemProducerError(f"system {self.system!r}: {exc}") from exc
        self._pending = []

    def _encoders(self, stream: str) -> tuple[Encoder, Encoder]:
        """The ``to_bytes`` of the stream's key and message serdes; None for bytes (stored as given)."""
        key, msg = self._serdes.key_serde(stream), self._serdes.msg_serde(stream)
        return None if is_identity(key) else key.to_bytes, None if is_identity(msg) else msg.to_bytes

    def _ensure(self, stream: str) -> None:
        if not self.log.has_stream(stream):
            key = f"systems.{self.system}.streams.{stream}.partitions"
            self.log.create_stream(stream, self._config.get_int(key, 1))

    def flush_now(self) -> None:
        """Write every pending message and make all of them durable and visible (blocking)."""
        with self._lock:
            self._write()
            self.log.flush()

    async def flush(self, source: str) -> None:
        """Return once every message sent so far is durable (fsync) and visible to readers."""
        await asyncio.to_thread(self.flush_now)

    async def stop(self) -> None:
        """Flush and close the files."""
        await self.flush("")
        self.log.close()


def _timestamps(
    envelopes: Sequence[OutgoingMessageEnvelope], several_streams: bool
) -> Mapping[str, list[int | None]] | None:
    """The event times of ``envelopes`` by stream, in order; None when none has one (checked in C)."""
    stamps = list(map(_timestamp_of, envelopes))
    if stamps.count(None) == len(stamps):
        return None
    if not several_streams:
        return {envelopes[0].system_stream.stream: stamps}
    by_stream: dict[str, list[int | None]] = {}
    for envelope, stamp in zip(envelopes, stamps, strict=True):
        by_stream.setdefault(envelope.system_stream.stream, []).append(stamp)
    return by_stream


def _headers(
    envelopes: Sequence[OutgoingMessageEnvelope], several_streams: bool, system: str
) -> Mapping[str, list[Headers]] | None:
    """The checked headers of ``envelopes`` by stream, in order; None when none has any (checked in C)."""
    if not any(map(_headers_of, envelopes)):
        return None
    by_stream: dict[str, list[Headers]] = {}
    for envelope in envelopes:
        headers = envelope.headers
        if headers:
            headers = checked_headers(headers, envelope.system_stream)
        by_stream.setdefault(envelope.system_stream.stream, []).append(headers)
    return by_stream


__all__ = ["Encoder", "LogSystemProducer"]
