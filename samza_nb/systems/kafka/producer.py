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
  ``key``) hashed with Kafka's murmur2 (the same partition as a Java producer); else one partition until
  a batch fills or the run ends, then the next (Kafka's sticky partitioning). Partition counts follow
  aiokafka's metadata, so a topic given more partitions is used whole.
- A record larger than ``systems.<s>.producer.max.request.size`` (default 1 MiB), a serde that returns
  something other than bytes, or a header that is not ``(str, bytes or None)`` raises in ``send``.
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

from samza_nb.errors import ConfigError, SamzaError, SystemProducerError
from samza_nb.systems.kafka.clients import bounded, close_quietly, describe
from samza_nb.systems.kafka.outgoing import Item, OutgoingRecords
from samza_nb.systems.partitioner import murmur2

if TYPE_CHECKING:
    from samza_nb.api.streams import OutgoingMessageEnvelope
    from samza_nb.systems.kafka.admin import KafkaSystemAdmin
    from samza_nb.systems.kafka.config import KafkaSystemConfig

CODECS: Final[tuple[str, ...]] = ("gzip", "snappy", "lz4", "zstd")
"""The values of ``compression.type`` aiokafka accepts (every one installed by the kafka extra)."""
_NO_HEADERS: list[tuple[str, bytes | None]] = []  # read, never changed, by aiokafka's batch builder
_PRUNE_AT = 256  # batches in flight before the delivered ones are checked and forgotten


class KafkaSystemProducer:
    """Sends to the topics of one Kafka system (see the module docstring for the guarantees)."""

    def __init__(self, settings: KafkaSystemConfig, admin: KafkaSystemAdmin) -> None:
        self.settings = settings
        self._admin = admin
        self._producer: AIOKafkaProducer | None = None
        self._queue: deque[list[Item]] = deque()  # runs of items, one per send_batch, in send order
        self._partitions: dict[str, int] = {}
        self._records = OutgoingRecords(settings, self._partitions)
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
        self._prune_at = _PRUNE_AT

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
        self._queue.append(self._records.serialize(envelopes))
        if threading.get_ident() == self._loop_thread:
            assert self._wakeup is not None
            self._wakeup.set()
        elif not self._wake_pending:
            self._wake_pending = True
            assert self._loop is not None and self._wakeup is not None
            self._loop.call_soon_threadsafe(self._wakeup.set)

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
                        run = runs[0] if len(runs) == 1 else list(chain.from_iterable(runs))
                        try:
                            await self._hand_over(run)
                        except asyncio.CancelledError:
                            raise
                        except Exception as exc:  # never lost: this run and what follows fail the flush
                            self._fail(run[0][0], exc)
            finally:
                self._busy = False
                drained.set()

    async def _hand_over(self, run: list[Item]) -> None:
        """Group ``run`` by partition (keeping each partition's order) and submit one batch per partition
        (more when one fills); a failure is recorded against the topic it concerns.

        Partition: the message's own; else its partition key's (or key's) murmur2 hash, as Kafka's default
        partitioner; else, for a message with neither, one partition until a batch fills or the run ends,
        then the next one (Kafka's sticky partitioning)."""
        counts = self._partitions
        producer = self._producer
        assert producer is not None
        cluster = producer.client.cluster
        for stream in set(map(itemgetter(0), run)):
            if stream in counts:
                # aiokafka's metadata (refreshed every metadata.max.age.ms): a topic given more partitions
                # is used whole, as a Kafka producer would
                live = cluster.partitions_for_topic(stream)
                if live:
                    counts[stream] = len(live)
                continue
            try:  # a topic written the first time
                counts[stream] = await self._admin.ensure_topic(
                    stream, self.settings.partitions_for(stream), self.settings.topic_configs, exact=False
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._fail(stream, exc)
                return
        # One pass: each message is appended to its partition's open batch; a full batch waits in `full`
        # (in fill order) and all are submitted after the pass, so each partition's order is kept.
        open_batches: dict[str, dict[int, Any]] = {}  # stream -> partition -> its open batch
        full: list[tuple[Any, str, int]] = []
        keyless: dict[str, int] = {}
        for stream, key, value, partition, key_hash, timestamp, tupled in run:
            count = counts[stream]
            batches = open_batches.get(stream)
            if batches is None:
                batches = open_batches[stream] = {}
            sticky = False
            if partition is None:
                if key_hash is None and key is not None:
                    key_hash = murmur2(key) & 0x7FFFFFFF
                if key_hash is not None:
                    partition = key_hash % count
                else:
                    sticky = True
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
            batch = batches.get(partition)
            if batch is None:
                batch = batches[partition] = producer.create_batch()
            headers = list(tupled) if tupled else _NO_HEADERS  # aiokafka's builder takes a list
            if batch.append(key=key, value=value, timestamp=timestamp, headers=headers) is None:  # full
                full.append((batch, stream, partition))
                batch = batches[partition] = producer.create_batch()
                batch.append(key=key, value=value, timestamp=timestamp, headers=headers)  # empty: takes any
                if sticky:  # a batch filled: the next messages without key go to the next partition
                    keyless[stream] = self._keyless_turn % count
                    self._keyless_turn += 1
        full.extend(
            (batch, stream, partition)
            for stream, batches in open_batches.items()
            for partition, batch in batches.items()
        )
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
        if len(in_flight) >= self._prune_at:
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
        # Next time when twice as many wait (many partitions can have many batches undelivered at once):
        # each batch is then scanned a bounded number of times.
        self._prune_at = max(_PRUNE_AT, 2 * len(pending))

    def _check_sender(self) -> None:
        """SystemProducerError when the sender task has ended, which only a bug can cause: what it had
        not handed over would otherwise never be delivered and flush would wait forever."""
        sender = self._sender
        if sender is not None and sender.done() and not self._stopped:
            error = None if sender.cancelled() else sender.exception()
            raise SystemProducerError(
                f"the Kafka producer of system {self.settings.system!r} stopped sending: "
                + (describe(error) if error is not None else "its sender was cancelled")
            )

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
            self._check_sender()
            drained.clear()
            self._wakeup.set()
            await drained.wait()
        self._check_sender()
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
