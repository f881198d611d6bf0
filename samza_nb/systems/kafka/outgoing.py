"""Outgoing Kafka records: envelopes serialized and checked in the sending task, as the producer queues
them (see :mod:`samza_nb.systems.kafka.producer`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from aiokafka.record.default_records import DefaultRecordBatchBuilder

from samza_nb.api.streams import Headers
from samza_nb.errors import SamzaError, SystemProducerError
from samza_nb.serde.builtin import BytesSerde
from samza_nb.systems.headers import checked_headers
from samza_nb.systems.kafka.admin import check_topic_name
from samza_nb.systems.partitioner import murmur2

if TYPE_CHECKING:
    from samza_nb.api.streams import OutgoingMessageEnvelope
    from samza_nb.serde.base import Serde
    from samza_nb.systems.kafka.config import KafkaSystemConfig

MAX_REQUEST_SIZE = 1_048_576
"""aiokafka's default ``max_request_size`` (``systems.<s>.producer.max.request.size``)."""

Item = tuple[str, bytes | None, bytes | None, int | None, int | None, int | None, Headers]
"""A queued message: (topic, key bytes, value bytes, explicit partition, partition-key hash, event time in
ms or None, headers)."""


class OutgoingRecords:
    """Serializes envelopes with their streams' serdes and checks them, so every error a message could
    cause later (in the client, or at the broker) raises in the task that sent it.

    ``partitions`` is the producer's map of known partition counts (read here to check an explicit
    partition early)."""

    def __init__(self, settings: KafkaSystemConfig, partitions: dict[str, int]) -> None:
        self.settings = settings
        self._partitions = partitions
        # stream -> (key serde, message serde, key serde is bytes, message serde is bytes)
        self._serdes: dict[str, tuple[Serde, Serde, bool, bool]] = {}
        self._max_request_size = int(settings.producer_settings.get("max_request_size", MAX_REQUEST_SIZE))

    def serialize(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> list[Item]:
        """The queue items of ``envelopes`` (serialized, partition key hashed, checked); one loop with its
        lookups in locals, since it runs for every message."""
        items: list[Item] = []
        append = items.append
        serdes_of, counts = self._serdes, self._partitions
        # Below half the request size, key and value fit whatever the other is (headers are checked
        # exactly): a message pays two len() calls, not a size estimate.
        size_limit = self._max_request_size // 2 - 1024
        last_stream: object = None
        for envelope in envelopes:
            system_stream = envelope.system_stream
            if system_stream is not last_stream:  # a run usually goes to one stream object: looked up once
                last_stream = system_stream
                stream = system_stream.stream
                serdes = serdes_of.get(stream)
                if serdes is None:
                    serdes = self._stream_serdes(stream)
                key_serde, msg_serde, key_raw, msg_raw = serdes
                count = counts.get(stream)
            key, message, partition = envelope.key, envelope.message, envelope.partition
            key_hash = None
            try:
                # bytes through the bytes serde: no call (the serde would return them unchanged)
                raw_key = key is None or (key_raw and type(key) is bytes)
                key_bytes = key if raw_key else _encoded(key_serde, key)
                raw_value = message is None or (msg_raw and type(message) is bytes)
                value = message if raw_value else _encoded(msg_serde, message)
                if partition is None and envelope.partition_key is not None:
                    key_hash = murmur2(_encoded(key_serde, envelope.partition_key)) & 0x7FFFFFFF
            except SamzaError as exc:
                raise SystemProducerError(f"message to {system_stream}: {exc}") from None
            if key_bytes is None and value is None:
                raise SystemProducerError(
                    f"message to {system_stream}: Kafka needs a key or a value (both are None)"
                )
            if partition is not None and (
                type(partition) is not int or partition < 0 or (count is not None and partition >= count)
            ):
                raise SystemProducerError(
                    f"message to {system_stream}: partition {partition!r} does not exist"
                    + (f" (the topic has partitions 0..{count - 1})" if count else "")
                )
            timestamp = envelope.timestamp
            if timestamp is not None and (type(timestamp) is not int or not 0 <= timestamp < 2**63):
                raise SystemProducerError(
                    f"message to {system_stream}: timestamp {timestamp!r} is not a Kafka timestamp "
                    "(an int of ms since the epoch, >= 0)"
                )
            headers = envelope.headers
            if headers:
                headers = checked_headers(headers, system_stream)
            if (
                headers
                or (value is not None and len(value) > size_limit)
                or (key_bytes is not None and len(key_bytes) > size_limit)
            ):
                self._check_size(system_stream, key_bytes, value, headers)
            append((stream, key_bytes, value, partition, key_hash, timestamp, headers))
        return items

    def _check_size(
        self, system_stream: object, key: bytes | None, value: bytes | None, headers: Headers
    ) -> None:
        """SystemProducerError naming the stream when the record would exceed
        ``systems.<s>.producer.max.request.size`` (which the broker would refuse, failing a later flush)."""
        size = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, list(headers))
        limit = self._max_request_size
        if size > limit:
            raise SystemProducerError(
                f"message to {system_stream}: {size} bytes as a record, more than "
                f"systems.{self.settings.system}.producer.max.request.size = {limit}"
            )

    def _stream_serdes(self, stream: str) -> tuple[Serde, Serde, bool, bool]:
        check_topic_name(stream, self.settings.system)
        key_serde, msg_serde = self.settings.key_serde(stream), self.settings.msg_serde(stream)
        serdes = (key_serde, msg_serde, type(key_serde) is BytesSerde, type(msg_serde) is BytesSerde)
        self._serdes[stream] = serdes
        return serdes


def _encoded(serde: Serde, obj: Any) -> bytes:
    """``serde.to_bytes(obj)``, checked to be bytes (a serde returning anything else is a SamzaError naming
    it, raised in the sending task rather than deep in the client)."""
    data = serde.to_bytes(obj)
    if type(data) is not bytes:
        if isinstance(data, bytearray | memoryview):
            return bytes(data)
        raise SamzaError(f"serde {type(serde).__name__} returned a {type(data).__name__}, not bytes")
    return data


__all__ = ["MAX_REQUEST_SIZE", "Item", "OutgoingRecords"]
