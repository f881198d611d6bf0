"""The Kafka SystemProducer: batches sends through aiokafka; ``flush`` returns only once they are delivered.

- ``send`` (from any thread) serializes key and value with the stream's serdes at once (a serde error
  raises in the sending task) and queues the message; a sender task on the container's loop takes
  everything queued at once and builds one record batch per partition from it (aiokafka's
  ``create_batch``/``send_batch``; a batch holds up to ``systems.<s>.producer.max.batch.size`` bytes), so a
  message costs an append to a batch, not a call through aiokafka's per-record ``send``. Deliveries wait
  for ``acks=all`` unless configured otherwise.
- ``envelope.timestamp`` (event time, ms >= 0) becomes the record's timestamp, which the consumer hands
  out as the envelope's ``timestamp`` (with the topic's default ``message.timestamp.type=CreateTime``; a
  topic set to ``LogAppendTime`` replaces it with the broker's time); without one, the send time.
- ``envelope.headers`` become the record's headers (names str, values bytes or None; anything else raises
  in ``send``); a message without headers costs nothing more.
- ``systems.<s>.producer.compression.type``: none, gzip, snappy, lz4 or zstd (the kafka extra installs
  every codec); another value is a ConfigError naming the key.
- Partition: ``envelope.partition`` if given (it must exist); else ``partition_key`` (or, by aiokafka,
  ``key``) hashed with Kafka's murmur2 (the same partition as a Java producer); else one partition for
  all such messages of a run, the next partition for the next run (Kafka's sticky partitioning).
- A topic written for the first time that does not exist is created with
  ``systems.<s>.streams.<t>.partitions`` partitions (default 1), never left to broker auto-creation.
- ``flush`` (the container calls it before every checkpoint) waits for every message queued so far, of
  every source, to be acknowledged. A failed delivery is never dropped: it makes that flush raise a
  SystemProducerError naming the topic and the broker, so the checkpoint is not written and the container
  fails; a restart re-processes from the previous checkpoint (at-least-once). Once a delivery failed,
  later ``send`` calls raise too. Flushing is bounded by ``systems.<s>.samza.broker.timeout.ms``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final

from aiokafka import AIOKafkaProducer

from samza_nb.api.streams import Headers
from samza_nb.errors import ConfigError, SamzaError, SystemProducerError
from samza_nb.systems.headers import checked_headers
from samza_nb.systems.kafka.admin import check_topic_name
from samza_nb.systems.kafka.clients import bounded, close_quietly, describe
from samza_nb.systems.partitioner import murmur2

if TYPE_CHECKING:
    from samza_nb.api.streams import OutgoingMessageEnvelope
    from samza_nb.systems.kafka.admin import KafkaSystemAdmin
    from samza_nb.systems.kafka.config import KafkaSystemConfig
    from samza_nb.systems.serdes import Serde

CODECS: Final[tuple[str, ...]] = ("gzip", "snappy", "lz4", "zstd")
"""The values of ``compression.type`` aiokafka accepts (every one installed by the kafka extra)."""
_NO_HEADERS: list[tuple[str, bytes | None]] = []  # read, never changed, by aiokafka's batch builder
_PRUNE_AT = 256  # batches in flight before the delivered ones are checked and forgotten
# A queued message: (topic, key bytes, value bytes, explicit partition, partition-key hash, event time in ms
# or None, headers).
_Item = tuple[str, bytes | None, bytes | None, int | None, int | None, int | None, Headers]


class KafkaSystemProducer:
    """Sends to the topics of one Kafka system (see the module docstring for the guarantees)."""

    def __init__(self, settings: KafkaSystemConfig, admin: KafkaSystemAdmin) -> None:
        self.settings = settings
        self._admin = admin
        self._producer: AIOKafkaProducer | None = None
        self._queue: deque[list[_Item]] = deque()  # runs of items, one per send_batch, in send order
        self._serdes: dict[str, tuple[Serde, Serde]] = {}
        self._partitions: dict[str, int] = {}
        self._in_flight: list[tuple[asyncio.Future[Any], str]] = []
        self._failure: SystemProducerError | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._wakeup: asyncio.Event | None = None
        self._drained: asyncio.Event | None = None
        self._wake_pending = False
        self._busy = False
        self._sender: asyncio.Task[None] | None = None
        self._stopped = False
        self._keyless_turn = 0

    # -- lifecycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect (bounded by the broker timeout) and start the sender task."""
        if self._producer is not None or self._stopped:
            raise SystemProducerError(f"the Kafka producer of system {self.settings.system!r} started twice")
        options = dict(self.settings.producer_settings)
        # Undeliverable batches expire within the broker timeout, so flush and stop stay bounded.
        options.setdefault("request_timeout_ms", max(int(self.settings.broker_timeout_s * 1000), 1000))
        if str(options.get("compression_type", "")).lower() in ("none", ""):  # Kafka's name for no codec
            options.pop("compression_type", None)
        producer = self._client(options)
        try:
            await bounded(
                producer.start(),
                self.settings,
                f"starting the Kafka producer of system {self.settings.system!r}",
                SystemProducerError,
            )
        except BaseException:
            await close_quietly(producer)
            raise
        self._producer = producer
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._wakeup = asyncio.Event()
        self._drained = asyncio.Event()
        self._sender = asyncio.create_task(self._send_loop(), name=f"kafka-producer-{self.settings.system}")

    def _client(self, options: dict[str, Any]) -> AIOKafkaProducer:
        """aiokafka's producer; a compression.type it refuses, or whose library is missing, is a ConfigError
        naming the key (aiokafka raises a bare ValueError or RuntimeError)."""
        try:
            return AIOKafkaProducer(bootstrap_servers=self.settings.bootstrap_servers, **options)
        except (ValueError, RuntimeError) as exc:
            codec = options.get("compression_type")
            if codec is None or "ompression" not in str(exc):
                raise
            key = f"systems.{self.settings.system}.producer.compression.type"
            if isinstance(exc, ValueError):
                raise ConfigError(
                    f"{key}={codec!r}: expected none or one of {', '.join(CODECS)}", key=key
                ) from None
            raise ConfigError(
                f"{key}={codec!r}: {exc} (the kafka extra installs every codec: "
                "pip install 'samza_nb[kafka]')",
                key=key,
            ) from None

    async def stop(self) -> None:
        """Flush, then disconnect (always); raises the flush's error, if any. Idempotent."""
        if self._stopped:
            return
        try:
            if self._producer is not None:
                await self.flush("")
        finally:
            self._stopped = True
            if self._sender is not None:
                self._sender.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._sender
            producer, self._producer = self._producer, None
            if producer is not None:
                try:
                    await asyncio.wait_for(producer.stop(), self.settings.broker_timeout_s + 5.0)
                except Exception as exc:
                    if self._failure is None:
                        raise SystemProducerError(
                            f"stopping the Kafka producer of {self.settings.describe_brokers()} failed: "
                            f"{describe(exc)}"
                        ) from exc

    # -- sending --------------------------------------------------------------------------------------
    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Serialize ``envelope`` and queue it for delivery; safe from any thread. A serde error, a message
        with neither key nor value, bad headers, or an earlier failed delivery raises SystemProducerError."""
        self.send_batch((envelope,))

    def send_batch(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> None:
        """:meth:`send` of each of ``envelopes`` in order, all or nothing: every envelope is checked and
        serialized before any is queued, so when one raises none is sent."""
        if self._failure is not None:
            raise SystemProducerError(f"an earlier delivery failed: {self._failure}")
        if self._producer is None:
            state = "stopped" if self._stopped else "not started"
            raise SystemProducerError(f"the Kafka producer of system {self.settings.system!r} is {state}")
        self._queue.append(self._serialize(envelopes))
        if threading.get_ident() == self._loop_thread:
            assert self._wakeup is not None
            self._wakeup.set()
        elif not self._wake_pending:
            self._wake_pending = True
            assert self._loop is not None and self._wakeup is not None
            self._loop.call_soon_threadsafe(self._wakeup.set)

    def _serialize(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> list[_Item]:
        """The queue items of ``envelopes`` (serialized, partition key hashed, checked); one loop with its
        lookups in locals, since it runs for every message."""
        items: list[_Item] = []
        append = items.append
        serdes_of, counts = self._serdes, self._partitions
        for envelope in envelopes:
            system_stream = envelope.system_stream
            stream = system_stream.stream
            serdes = serdes_of.get(stream)
            if serdes is None:
                serdes = self._stream_serdes(stream)
            key_serde, msg_serde = serdes
            key, message, partition = envelope.key, envelope.message, envelope.partition
            key_hash = None
            try:
                key_bytes = None if key is None else key_serde.to_bytes(key)
                value = None if message is None else msg_serde.to_bytes(message)
                if partition is None and envelope.partition_key is not None:
                    key_hash = murmur2(key_serde.to_bytes(envelope.partition_key)) & 0x7FFFFFFF
            except SamzaError as exc:
                raise SystemProducerError(f"message to {system_stream}: {exc}") from None
            if key_bytes is None and value is None:
                raise SystemProducerError(
                    f"message to {system_stream}: Kafka needs a key or a value (both are None)"
                )
            if partition is not None:
                count = counts.get(stream)
                if type(partition) is not int or partition < 0 or (count is not None and partition >= count):
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
            append((stream, key_bytes, value, partition, key_hash, timestamp, headers))
        return items

    def _stream_serdes(self, stream: str) -> tuple[Serde, Serde]:
        check_topic_name(stream, self.settings.system)
        serdes = (self.settings.key_serde(stream), self.settings.msg_serde(stream))
        self._serdes[stream] = serdes
        return serdes

    async def _send_loop(self) -> None:
        """Hand queued messages to aiokafka, in order, a run at a time: each run (everything queued when the
        loop wakes) becomes one record batch per partition. After a failure, drop the rest (they are
        reported by the failure: nothing after it is checkpointed)."""
        wakeup, drained, queue = self._wakeup, self._drained, self._queue
        assert wakeup is not None and drained is not None
        while True:
            await wakeup.wait()
            wakeup.clear()
            self._wake_pending = False
            self._busy = True
            try:
                while queue:
                    # popleft, not list + clear: other threads may append meanwhile.
                    runs = [queue.popleft() for _ in range(len(queue))]
                    if self._failure is None:
                        await self._hand_over(runs[0] if len(runs) == 1 else list(chain.from_iterable(runs)))
            finally:
                self._busy = False
                drained.set()

    async def _hand_over(self, run: list[_Item]) -> None:
        """Group ``run`` by partition (keeping each partition's order) and submit one batch per partition
        (more when one fills); a failure is recorded against the topic it concerns.

        Partition: the message's own; else its partition key's (or key's) murmur2 hash, as Kafka's default
        partitioner; else, for a message with neither, one partition per run and topic, the next one the
        next run (Kafka's sticky partitioning)."""
        counts = self._partitions
        for stream in set(map(itemgetter(0), run)).difference(counts):  # topics written the first time
            try:
                counts[stream] = await self._admin.ensure_topic(
                    stream, self.settings.partitions_for(stream), self.settings.topic_configs, exact=False
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._fail(stream, exc)
                return
        producer = self._producer
        assert producer is not None
        # One pass: each message is appended to its partition's open batch; a full batch waits in `full`
        # (in fill order) and all are submitted after the pass, so each partition's order is kept.
        open_batches: dict[tuple[str, int], Any] = {}
        full: list[tuple[Any, str, int]] = []
        keyless: dict[str, int] = {}
        for stream, key, value, partition, key_hash, timestamp, tupled in run:
            count = counts[stream]
            if partition is None:
                if key_hash is None and key is not None:
                    key_hash = murmur2(key) & 0x7FFFFFFF
                if key_hash is not None:
                    partition = key_hash % count
                else:
                    partition = keyless.get(stream)
                    if partition is None:
                        partition = keyless[stream] = self._keyless_turn % count
                        self._keyless_turn += 1
            elif partition >= count:
                error = SystemProducerError(
                    f"partition {partition} does not exist (partitions 0..{count - 1})"
                )
                self._fail(stream, error)
                return
            where = (stream, partition)
            batch = open_batches.get(where)
            if batch is None:
                batch = open_batches[where] = producer.create_batch()
            headers = list(tupled) if tupled else _NO_HEADERS  # aiokafka's builder takes a list
            if batch.append(key=key, value=value, timestamp=timestamp, headers=headers) is None:  # full
                full.append((batch, stream, partition))
                batch = open_batches[where] = producer.create_batch()
                batch.append(key=key, value=value, timestamp=timestamp, headers=headers)  # empty: takes any
        full.extend((batch, stream, partition) for (stream, partition), batch in open_batches.items())
        for batch, stream, partition in full:
            try:
                await self._send_batch(batch, stream, partition)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._fail(stream, exc)
                return

    async def _send_batch(self, batch: Any, stream: str, partition: int) -> None:
        assert self._producer is not None
        future = await self._producer.send_batch(batch, stream, partition=partition)
        in_flight = self._in_flight
        in_flight.append((future, stream))
        if len(in_flight) >= _PRUNE_AT:
            self._prune()

    def _prune(self) -> None:
        """Forget delivered messages (checking them); keep the undelivered."""
        pending = []
        for future, stream in self._in_flight:
            if future.done():
                self._check(future, stream)
            else:
                pending.append((future, stream))
        self._in_flight = pending

    def _check(self, future: asyncio.Future[Any], stream: str) -> None:
        if future.cancelled():
            self._fail(stream, asyncio.CancelledError("delivery cancelled"))
            return
        exc = future.exception()
        if exc is not None:
            self._fail(stream, exc)

    def _fail(self, stream: str, exc: BaseException) -> None:
        if self._failure is None:
            detail = str(exc) if isinstance(exc, SamzaError) else describe(exc)
            self._failure = SystemProducerError(
                f"delivery to Kafka topic {stream!r} on {self.settings.describe_brokers()} failed: {detail}"
            )
            self._failure.__cause__ = exc

    # -- flushing -------------------------------------------------------------------------------------
    async def flush(self, source: str) -> None:
        """Return once every message queued so far (by any source) is acknowledged; SystemProducerError
        if one failed or the broker did not acknowledge within the broker timeout."""
        if self._producer is None:
            if self._failure is not None:
                raise self._failure
            return
        await bounded(
            self._flush(),
            self.settings,
            f"flushing the Kafka producer of system {self.settings.system!r}",
            SystemProducerError,
        )

    async def _flush(self) -> None:
        drained = self._drained
        assert drained is not None and self._wakeup is not None
        while self._queue or self._busy:
            drained.clear()
            self._wakeup.set()
            await drained.wait()
        in_flight, self._in_flight = self._in_flight, []
        if in_flight:
            try:
                await asyncio.wait([future for future, _ in in_flight])
            except BaseException:  # timed out or cancelled: they stay tracked
                self._in_flight[:0] = in_flight
                raise
            for future, stream in in_flight:
                self._check(future, stream)
        if self._failure is not None:
            raise self._failure


__all__ = ["CODECS", "KafkaSystemProducer"]
