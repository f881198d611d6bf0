"""The Kafka SystemConsumer: reads the job model's partitions from their starting offsets.

- Assignment: the partitions registered by the container, fetched directly (no consumer group, no
  rebalancing: Samza owns the assignment), each from its starting offset. A position that does not exist
  (past the partition's end after the topic was recreated, or before its oldest message after retention),
  at start or later, resumes per ``systems.<s>.consumer.auto.offset.reset`` (default earliest:
  at-least-once; none: a SystemConsumersError), and the move is reported (:meth:`take_resets`) so the
  container processes every message from the new position.
- Fetching (:mod:`.fetcher`): Fetch requests in the background, one response ahead per partition; records
  become :class:`IncomingMessageEnvelope` objects in one tight loop (offset as a decimal string, the
  record's timestamp in ms, key and value through the stream's serdes; the default bytes serde costs
  nothing). One ``poll`` returns what was fetched for every partition asked for.
- Back-pressure: a partition is fetched again only after ``poll`` took its buffer. The container polls
  only partitions whose own buffer is empty, so a slow task's partitions pause at one buffered batch plus
  one fetched response, while the others go on.
- Broker loss: failed requests are retried; ``poll`` raises a SystemConsumersError naming the broker when
  the partitions it waits for got no fetch response for ``systems.<s>.samza.broker.timeout.ms``. Starting
  against an unreachable broker fails within that time too.

Settings used from ``systems.<s>.consumer.*``: the connection ones (client.id, request.timeout.ms,
retry.backoff.ms, metadata.max.age.ms, security.protocol, ssl/sasl ones, connections.max.idle.ms) and
fetch.max.wait.ms, fetch.min.bytes, fetch.max.bytes, max.partition.fetch.bytes, check.crcs,
auto.offset.reset. aiokafka's consumer-group settings are accepted and have no effect.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from aiokafka import AIOKafkaClient

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.errors import SamzaError, SystemConsumersError
from samza_nb.serde.streams import is_identity
from samza_nb.systems.kafka.admin import KAFKA_OFFSET
from samza_nb.systems.kafka.clients import bounded, client_settings, close_quietly, describe, topic_partitions
from samza_nb.systems.kafka.fetcher import Fetcher, PartitionState
from samza_nb.systems.offsets import parse_integer_offset

if TYPE_CHECKING:
    from samza_nb.api.metadata import OffsetReset
    from samza_nb.systems.kafka.config import KafkaSystemConfig


class KafkaSystemConsumer:
    """Reads registered partitions of one Kafka system (see the module docstring for the guarantees)."""

    def __init__(self, settings: KafkaSystemConfig) -> None:
        self.settings = settings
        self._parts: dict[SystemStreamPartition, PartitionState] = {}
        self._client: AIOKafkaClient | None = None
        self._fetcher: Fetcher | None = None
        self._stopped = False

    # -- lifecycle ------------------------------------------------------------------------------------
    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from ``offset`` (a Kafka offset string; the first message to return)."""
        if self._client is not None:
            raise SystemConsumersError(f"{ssp} registered after the Kafka consumer started")
        position = parse_integer_offset(ssp, offset, KAFKA_OFFSET)
        key_serde = self.settings.key_serde(ssp.stream)
        msg_serde = self.settings.msg_serde(ssp.stream)
        self._parts[ssp] = PartitionState(
            ssp,
            position,
            None if is_identity(key_serde) else key_serde.from_bytes,
            None if is_identity(msg_serde) else msg_serde.from_bytes,
        )

    async def start(self) -> None:
        """Check every registered topic exists (a SystemConsumersError naming a missing one), connect and
        start fetching; bounded by the broker timeout."""
        if self._client is not None or self._stopped:
            raise SystemConsumersError(f"the Kafka consumer of system {self.settings.system!r} started twice")
        settings = self.settings
        counts = await topic_partitions(settings, SystemConsumersError)
        for ssp in self._parts:
            count = counts.get(ssp.stream)
            if not count:
                known = ", ".join(sorted(t for t in counts if not t.startswith("__"))) or "none"
                raise SystemConsumersError(
                    f"input {ssp}: Kafka topic {ssp.stream!r} does not exist on {settings.bootstrap_servers} "
                    f"(topics there: {known})"
                )
            if ssp.partition >= count:
                raise SystemConsumersError(
                    f"input {ssp}: Kafka topic {ssp.stream!r} has only {count} partitions"
                )
        client = AIOKafkaClient(bootstrap_servers=settings.bootstrap_servers, **client_settings(settings))
        self._client = client
        try:

            async def connect() -> None:
                await client.bootstrap()
                if self._parts:  # the topics exist: naming them in metadata requests creates nothing
                    await client.set_topics(sorted({ssp.stream for ssp in self._parts}))

            await bounded(
                connect(),
                settings,
                f"starting the Kafka consumer of system {settings.system!r}",
                SystemConsumersError,
            )
        except BaseException:
            self._client = None
            await close_quietly(client, "close")
            raise
        now = time.monotonic()
        for part in self._parts.values():
            part.last_ok = now
        self._fetcher = Fetcher(settings, client, list(self._parts.values()))
        self._fetcher.start()

    async def stop(self) -> None:
        """Stop fetching and disconnect (idempotent)."""
        self._stopped = True
        fetcher, self._fetcher = self._fetcher, None
        if fetcher is not None:
            await fetcher.stop()
        client, self._client = self._client, None
        if client is not None:
            await close_quietly(client, "close")

    # -- polling --------------------------------------------------------------------------------------
    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The fetched messages of ``ssps`` in offset order, waiting up to ``timeout`` seconds for any.
        Kafka partitions are unbounded: no end-of-stream."""
        fetcher = self._fetcher
        if fetcher is None:
            raise SystemConsumersError(
                f"poll on the Kafka consumer of system {self.settings.system!r} before start (or after stop)"
            )
        try:
            wanted = [self._parts[ssp] for ssp in ssps]
        except KeyError as exc:
            raise SystemConsumersError(f"{exc.args[0]} was never registered with this consumer") from None
        result = self._take(fetcher, wanted)
        if result or not wanted:
            return result
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            if fetcher.failure is not None:
                self._raise(fetcher.failure)
            self._check_alive(wanted)
            remaining = deadline - loop.time()
            if remaining <= 0:
                return {}
            fetcher.data.clear()
            result = self._take(fetcher, wanted)
            if result:
                return result
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(fetcher.data.wait(), remaining)
            result = self._take(fetcher, wanted)
            if result:
                return result

    @staticmethod
    def _take(
        fetcher: Fetcher, wanted: list[PartitionState]
    ) -> dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        result: dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = {}
        for part in wanted:
            if part.buffer:
                result[part.ssp] = part.buffer
                part.buffer = []
        if result:
            fetcher.wake()
        return result

    def _raise(self, failure: BaseException) -> None:
        if isinstance(failure, SamzaError):
            raise failure
        raise SystemConsumersError(
            f"fetching from {self.settings.describe_brokers()} failed: {describe(failure)}"
        ) from failure

    def take_resets(self) -> Sequence[OffsetReset]:
        """The partitions moved per auto.offset.reset since the last call (their position did not exist:
        the topic was recreated or truncated), oldest first."""
        fetcher = self._fetcher
        if fetcher is None or not fetcher.resets:
            return ()
        taken, fetcher.resets = fetcher.resets, []
        return taken

    def highwater(self, ssp: SystemStreamPartition) -> int | None:
        """The high watermark of ``ssp`` in the last fetch response (the offset the next message written
        will get), or None before the first response: ``highwater - 1 - offset`` is the lag."""
        return self._parts[ssp].highwater

    def _check_alive(self, wanted: list[PartitionState]) -> None:
        """Nothing came for ``wanted``: fail when none of them got a fetch response within the broker
        timeout (a partition with an empty buffer is fetched continuously, so silence means a lost
        broker)."""
        latest = max(part.last_ok for part in wanted)
        silent = time.monotonic() - latest
        if silent > self.settings.broker_timeout_s:
            names = ", ".join(str(p.ssp) for p in wanted[:4]) + (" ..." if len(wanted) > 4 else "")
            errors = sorted({p.last_error for p in wanted if p.last_error})
            raise SystemConsumersError(
                f"lost the connection to {self.settings.describe_brokers()}: no fetch response for {names} "
                f"in {silent:.1f} s (systems.{self.settings.system}.samza.broker.timeout.ms = "
                f"{self.settings.broker_timeout_s * 1000:.0f})"
                + (f"; last error: {'; '.join(errors)}" if errors else "")
                + ". Is the broker running? A restart of the job resumes from the last checkpoint"
            )


__all__ = ["KafkaSystemConsumer"]
