"""The Kafka SystemAdmin: partition metadata checked against what the broker holds, offset order, topics.

Offsets are the Kafka offsets as decimal strings and compare as integers ("2" < "10").

Partition metadata: ``oldest`` is the log start offset (ListOffsets, earliest); ``upcoming`` is the high
watermark of a fetch response, not ListOffsets(latest): the broker used here (Tansu) answers
ListOffsets(latest) with the base offset of the last record batch + 1, which undercounts after batched
produces, while the fetch response's high watermark is right; under read_committed ``upcoming`` is the last
stable offset when lower (where such a consumer stops, as Kafka's ``endOffsets``). ``newest`` is the last
record a consumer delivers (:mod:`.tail`): transaction markers occupy offsets but are never messages, so a
partition ending in a COMMIT marker has no backlog. A partition is empty when no record below ``upcoming``
is delivered (then ``oldest`` and ``newest`` are None).

No admin operation makes the broker auto-create a topic: existence is checked against the metadata of all
topics, never with a metadata request naming the topic (which Tansu, like Kafka with
``auto.create.topics.enable``, answers by creating it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Final

from aiokafka import AIOKafkaClient, AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from samza_nb.api.metadata import SSPMetadata
from samza_nb.errors import SamzaError
from samza_nb.systems.kafka.clients import bounded, client_settings, close_quietly, topic_partitions
from samza_nb.systems.kafka.tail import Tail, read_tails
from samza_nb.systems.kafka.transactions import ISOLATION_LEVELS
from samza_nb.systems.offsets import compare_integer_offsets, integer_offset_after

if TYPE_CHECKING:
    from samza_nb.systems.kafka.config import KafkaSystemConfig

log = logging.getLogger(__name__)

TOPIC_ALREADY_EXISTS: Final[int] = 36
UNKNOWN_TOPIC: Final[int] = 3
_LEGAL_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,249}$")
COMPACT: Final[Mapping[str, str]] = {"cleanup.policy": "compact"}


def check_topic_name(stream: str, system: str) -> None:
    """A SamzaError unless ``stream`` is a legal Kafka topic name (letters, digits, ``._-``; 1-249)."""
    if not _LEGAL_TOPIC.match(stream) or stream in (".", ".."):
        raise SamzaError(
            f"stream {system}.{stream}: {stream!r} is not a legal Kafka topic name "
            "(letters, digits, '.', '_' and '-', at most 249 characters)"
        )


KAFKA_OFFSET: Final = "a Kafka offset (expected 0, 1, ...)"
"""What a Kafka offset is, for errors about one."""


compare_offsets = compare_integer_offsets
"""Integer order of two Kafka offsets; end-of-stream sorts last."""


class KafkaSystemAdmin:
    """Admin of one Kafka system. Each call opens its own short-lived connections and closes them, so the
    admin holds nothing between calls (and needs no stop).

    Every call is bounded by ``systems.<s>.samza.broker.timeout.ms``; an unreachable broker is a
    SamzaError naming it.
    """

    def __init__(self, settings: KafkaSystemConfig) -> None:
        self.settings = settings
        self.system = settings.system

    # -- metadata -------------------------------------------------------------------------------------
    async def partition_counts(self) -> dict[str, int]:
        """Every topic on the brokers with its partition count (never creates one)."""
        return await topic_partitions(self.settings, SamzaError)

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """oldest/newest/upcoming of every partition of ``streams``. A stream that is not a topic on the
        brokers is a SamzaError naming it (and it is not created)."""
        wanted = list(dict.fromkeys(streams))
        if not wanted:
            return {}
        for stream in wanted:
            check_topic_name(stream, self.system)
        counts = await self.partition_counts()
        missing = [stream for stream in wanted if counts.get(stream, 0) < 1]
        if missing:
            known = ", ".join(sorted(t for t in counts if not t.startswith("__"))) or "none"
            raise SamzaError(
                f"Kafka topic(s) {', '.join(repr(m) for m in missing)} of system {self.system!r} do not "
                f"exist on {self.settings.bootstrap_servers} (topics there: {known}); create them first "
                "(or let a producer create them)"
            )
        return await self._offsets({stream: counts[stream] for stream in wanted})

    async def _offsets(self, partitions: Mapping[str, int]) -> dict[str, dict[int, SSPMetadata]]:
        tps = [TopicPartition(topic, p) for topic, count in partitions.items() for p in range(count)]
        settings = dict(self.settings.consumer_settings)
        settings.update(enable_auto_commit=False, fetch_max_wait_ms=10, auto_offset_reset="earliest")
        consumer = AIOKafkaConsumer(bootstrap_servers=self.settings.bootstrap_servers, **settings)

        async def read() -> tuple[dict[TopicPartition, int], dict[TopicPartition, int]]:
            await consumer.start()
            consumer.assign(tps)
            oldest: dict[TopicPartition, int] = await consumer.beginning_offsets(tps)
            listed: dict[TopicPartition, int] = await consumer.end_offsets(tps)
            for tp in tps:
                # ListOffsets(latest) may undercount but never overcounts here: fetching from it returns
                # (at most) the last batch and, with it, the true high watermark.
                consumer.seek(tp, max(oldest[tp], listed[tp]))
            while True:
                missing = [tp for tp in tps if consumer.highwater(tp) is None]
                if not missing:
                    break
                await consumer.getmany(timeout_ms=50)
            return oldest, {tp: int(consumer.highwater(tp)) for tp in tps}

        async def tails(
            oldest: dict[TopicPartition, int], upcoming: dict[TopicPartition, int]
        ) -> dict[TopicPartition, Tail]:
            client = AIOKafkaClient(
                bootstrap_servers=self.settings.bootstrap_servers, **client_settings(self.settings)
            )
            try:
                await client.bootstrap()
                await client.set_topics(sorted(partitions))
                isolation = ISOLATION_LEVELS[str(settings.get("isolation_level", "read_uncommitted"))]
                return await read_tails(client, isolation, {tp: (oldest[tp], upcoming[tp]) for tp in tps})
            finally:
                await close_quietly(client, "close")

        names = ", ".join(partitions)
        what = f"reading the offsets of Kafka topic(s) {names}"
        try:
            oldest, upcoming = await bounded(read(), self.settings, what, SamzaError)
        finally:
            await close_quietly(consumer)
        # The newest offset is the last record a consumer delivers: not a transaction marker, nor (under
        # read_committed) an aborted or not yet committed record (see .tail).
        ends = await bounded(tails(oldest, upcoming), self.settings, what, SamzaError)
        result: dict[str, dict[int, SSPMetadata]] = {topic: {} for topic in partitions}
        for tp in tps:
            start, tail = oldest[tp], ends[tp]
            if start < tail.end and tail.newest is not None:
                meta = SSPMetadata(str(start), str(tail.newest), str(tail.end))
            else:
                meta = SSPMetadata(None, None, str(max(start, tail.end)))
            result[tp.topic][tp.partition] = meta
        return result

    # -- offsets --------------------------------------------------------------------------------------
    def offset_comparator(self, a: str, b: str) -> int:
        """Integer order ("2" < "10"); end-of-stream sorts last."""
        return compare_offsets(a, b)

    def offset_after(self, offset: str) -> str:
        """The next offset (Kafka offsets are consecutive; a compacted gap is skipped by the fetch)."""
        return integer_offset_after(f"system {self.system!r}", offset, KAFKA_OFFSET)

    # -- streams --------------------------------------------------------------------------------------
    async def create_stream(self, stream: str, partitions: int) -> None:
        """Create topic ``stream`` with ``partitions`` partitions (replication and topic configs from
        ``systems.<s>.default.stream.*``) unless it exists; an existing topic is left as it is."""
        await self.ensure_topic(stream, partitions, self.settings.topic_configs, exact=False)

    async def create_changelog_stream(self, stream: str, partitions: int) -> None:
        """Create the compacted changelog topic ``stream`` with ``partitions`` partitions unless it exists.
        An existing changelog with another partition count is a SamzaError (its partitions are the tasks'
        stores; the count cannot change)."""
        configs = {**self.settings.topic_configs, **COMPACT}
        await self.ensure_topic(stream, partitions, configs, exact=True)

    async def create_checkpoint_stream(self, stream: str, replication_factor: int | None = None) -> None:
        """Create the compacted one-partition checkpoint topic ``stream`` unless it exists; an existing
        topic with more partitions is a SamzaError."""
        configs = {**self.settings.topic_configs, **COMPACT}
        await self.ensure_topic(stream, 1, configs, exact=True, replication_factor=replication_factor)

    async def ensure_topic(
        self,
        stream: str,
        partitions: int,
        topic_configs: Mapping[str, str],
        *,
        exact: bool,
        replication_factor: int | None = None,
    ) -> int:
        """Make sure topic ``stream`` exists; returns its partition count. With ``exact``, an existing topic
        must have ``partitions`` partitions."""
        check_topic_name(stream, self.system)
        if not isinstance(partitions, int) or partitions < 1:
            raise SamzaError(f"stream {self.system}.{stream}: partitions must be an integer >= 1")
        counts = await self.partition_counts()
        if stream not in counts:
            await self._create(stream, partitions, topic_configs, replication_factor)
            counts = await self._await_topic(stream)
        existing = counts[stream]
        if exact and existing != partitions:
            raise SamzaError(
                f"Kafka topic {stream!r} of system {self.system!r} has {existing} partitions, "
                f"not {partitions}"
            )
        return existing

    async def stream_names(self) -> set[str]:
        """Every topic on the brokers (never creates one)."""
        return set(await self.partition_counts())

    async def delete_streams(self, streams: Collection[str]) -> None:
        """Delete topics ``streams`` (one already gone is no error); a SamzaError names a topic the broker
        did not delete."""
        if not streams:
            return
        admin = AIOKafkaAdminClient(
            bootstrap_servers=self.settings.bootstrap_servers, **client_settings(self.settings)
        )

        async def delete() -> None:
            await admin.start()
            response = await admin.delete_topics(sorted(streams))
            for name, code, *_ in response.topic_error_codes:
                if code not in (0, UNKNOWN_TOPIC):
                    raise SamzaError(
                        f"deleting Kafka topic {name!r} on {self.settings.bootstrap_servers} failed: "
                        f"error {code}"
                    )

        try:
            await bounded(delete(), self.settings, f"deleting Kafka topics {sorted(streams)}", SamzaError)
        finally:
            with contextlib.suppress(Exception):
                await admin.close()
        log.info("deleted Kafka topics %s on %s", ", ".join(sorted(streams)), self.settings.system)

    async def _create(
        self, stream: str, partitions: int, topic_configs: Mapping[str, str], replication: int | None
    ) -> None:
        admin = AIOKafkaAdminClient(
            bootstrap_servers=self.settings.bootstrap_servers, **client_settings(self.settings)
        )
        topic = NewTopic(
            stream,
            partitions,
            replication or self.settings.replication_factor,
            topic_configs=dict(topic_configs),
        )

        async def create() -> None:
            await admin.start()
            response = await admin.create_topics([topic])
            for name, code, message, *_ in response.topic_errors:
                if code not in (0, TOPIC_ALREADY_EXISTS):
                    raise SamzaError(
                        f"creating Kafka topic {name!r} on {self.settings.bootstrap_servers} failed: "
                        f"error {code} {message or ''}".strip()
                    )

        try:
            await bounded(create(), self.settings, f"creating Kafka topic {stream!r}", SamzaError)
        finally:
            with contextlib.suppress(Exception):
                await admin.close()
        log.info("created Kafka topic %s (%d partitions) on %s", stream, partitions, self.settings.system)

    async def _await_topic(self, stream: str) -> dict[str, int]:
        """The topic list once it shows ``stream`` (creation may take a moment to reach the metadata)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.broker_timeout_s
        while True:
            counts = await self.partition_counts()
            if counts.get(stream, 0) >= 1:
                return counts
            if loop.time() > deadline:
                raise SamzaError(f"Kafka topic {stream!r} was created but never appeared in the metadata")
            await asyncio.sleep(0.05)


__all__ = [
    "COMPACT",
    "KafkaSystemAdmin",
    "check_topic_name",
    "compare_offsets",
]
