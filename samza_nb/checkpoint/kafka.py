"""Checkpoints in a Kafka topic, as Samza keeps them.

``task.checkpoint.factory = samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory`` with
``task.checkpoint.system`` (else ``job.default.system``) naming a Kafka system. The topic is
``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` (``_`` → ``-`` in name and id): one partition,
``cleanup.policy=compact``, created at start when missing (replication ``task.checkpoint.replication.factor``,
default the system's ``default.stream.replication.factor``).

Messages are Samza's checkpoint messages byte for byte (:mod:`samza_nb.checkpoint.stream_format`: v1
and/or v2 as ``task.checkpoint.write.versions`` and ``task.checkpoint.read.versions`` say), so a Java Samza
job's checkpoint topic is read and samza_nb's is readable by Samza. At start the whole topic is read, up to
the high watermark the fetch reports, and per task the last message of the preferred version wins (a null
value deletes it), so it is right whether or not the broker compacts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.checkpoint.stream_format import CheckpointFormat, StreamCheckpointManager, checkpoint_topic
from samza_nb.errors import CheckpointError, ConfigError, SamzaError
from samza_nb.systems.kafka.admin import KafkaSystemAdmin, check_topic_name
from samza_nb.systems.kafka.clients import bounded, close_quietly
from samza_nb.systems.kafka.config import KafkaSystemConfig

if TYPE_CHECKING:
    from samza_nb.config.config import Config

CHECKPOINT_SYSTEM_KEY: Final[str] = "task.checkpoint.system"
CHECKPOINT_REPLICATION_KEY: Final[str] = "task.checkpoint.replication.factor"


def checkpoint_system(config: Config) -> str:
    """``task.checkpoint.system``, else ``job.default.system``; a ConfigError when neither is set."""
    system = (config.get_str(CHECKPOINT_SYSTEM_KEY) or config.get_str("job.default.system") or "").strip()
    if not system:
        raise ConfigError(
            f"missing required config {CHECKPOINT_SYSTEM_KEY}: the Kafka system holding the checkpoint topic "
            "(or set job.default.system)",
            key=CHECKPOINT_SYSTEM_KEY,
        )
    return system


class KafkaCheckpointManager(StreamCheckpointManager):
    """Reads and writes task checkpoints on the checkpoint topic of one job (see the module docstring).

    ``start`` creates the topic if needed and reads it to its end; ``read_last_checkpoint`` answers from
    what was read (and written since); ``write_checkpoint`` returns once the broker acknowledged the
    message (acks=all). Failures, including an unreachable broker after the system's broker timeout, raise
    CheckpointError naming the broker and the topic.
    """

    def __init__(
        self,
        settings: KafkaSystemConfig,
        topic: str,
        checkpoint_format: CheckpointFormat,
        replication_factor: int | None = None,
    ) -> None:
        self.settings = settings
        self.topic = topic
        self._replication = replication_factor
        super().__init__(topic, checkpoint_format)
        self._producer: AIOKafkaProducer | None = None
        self._state = "new"

    async def start(self) -> None:
        """Create the topic if missing, read every checkpoint on it, connect the writer."""
        self._check_new()
        admin = KafkaSystemAdmin(self.settings)
        try:
            await admin.create_checkpoint_stream(self.topic, self._replication)
            metadata = await admin.get_metadata([self.topic])
        except CheckpointError:
            raise
        except SamzaError as exc:
            raise CheckpointError(f"checkpoint topic {self.topic!r}: {exc}") from exc
        upcoming = int(metadata[self.topic][0].upcoming or 0)
        oldest = int(metadata[self.topic][0].oldest or upcoming)
        if oldest < upcoming:
            await bounded(
                self._read(oldest, upcoming),
                self.settings,
                f"reading checkpoint topic {self.topic!r}",
                CheckpointError,
                timeout=max(self.settings.broker_timeout_s, 60.0),
            )
        options = dict(self.settings.producer_settings)
        options["acks"] = "all"
        options.setdefault("request_timeout_ms", max(int(self.settings.broker_timeout_s * 1000), 1000))
        producer = AIOKafkaProducer(bootstrap_servers=self.settings.bootstrap_servers, **options)
        try:
            await bounded(
                producer.start(), self.settings, f"connecting to write {self.topic!r}", CheckpointError
            )
        except BaseException:
            await close_quietly(producer)
            raise
        self._producer = producer
        self._state = "started"

    async def _read(self, start: int, end: int) -> None:
        options = dict(self.settings.consumer_settings)
        options.update(enable_auto_commit=False, auto_offset_reset="earliest")
        consumer = AIOKafkaConsumer(bootstrap_servers=self.settings.bootstrap_servers, **options)
        tp = TopicPartition(self.topic, 0)
        try:
            await consumer.start()
            consumer.assign([tp])
            consumer.seek(tp, start)
            while await consumer.position(tp) < end:
                batches = await consumer.getmany(tp, timeout_ms=200)
                for record in batches.get(tp, ()):
                    self._table.apply(record.key, record.value, record.offset, record.timestamp)
        finally:
            await close_quietly(consumer)

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Write ``checkpoint`` as the task's latest (one message per write version, in order); returns
        once all are acknowledged."""
        self._require_started("write_checkpoint")
        await self._append(f"the checkpoint of task {task_name!r}", self._messages(task_name, checkpoint))
        self._table.wrote(task_name, checkpoint)

    async def _append(self, what: str, messages: list[tuple[bytes, bytes | None]]) -> None:
        producer = self._require_started("write_checkpoint")

        async def deliver() -> None:
            futures = [
                await producer.send(self.topic, value, key=key, partition=0) for key, value in messages
            ]
            for future in futures:
                await future

        await bounded(deliver(), self.settings, f"writing {what} to topic {self.topic!r}", CheckpointError)

    async def stop(self) -> None:
        """Disconnect. Idempotent."""
        self._state = "stopped"
        producer, self._producer = self._producer, None
        if producer is not None:
            await close_quietly(producer)

    def _require_started(self, what: str) -> AIOKafkaProducer:
        if self._state != "started" or self._producer is None:
            raise self._not_started(what)
        return self._producer

    def __str__(self) -> str:
        servers = self.settings.bootstrap_servers
        return f"Kafka checkpoint manager of topic {self.topic!r} on {servers} ({self._state})"


class KafkaCheckpointManagerFactory:
    """``task.checkpoint.factory = samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory``."""

    def get_checkpoint_manager(self, config: Config) -> KafkaCheckpointManager:
        """A manager of the job's checkpoint topic on ``task.checkpoint.system`` (a Kafka system)."""
        system = checkpoint_system(config)
        factory_key = f"systems.{system}.samza.factory"
        from samza_nb.systems.kafka.factory import KafkaSystemFactory
        from samza_nb.systems.registry import system_factory

        factory = system_factory(config, system)
        if not isinstance(factory, KafkaSystemFactory):
            raise ConfigError(
                f"{CHECKPOINT_SYSTEM_KEY}={system!r}: Kafka checkpoints need a Kafka system, but "
                f"{factory_key}={config.get_str(factory_key)!r}",
                key=CHECKPOINT_SYSTEM_KEY,
            )
        settings = KafkaSystemConfig.from_config(system, config)
        topic = checkpoint_topic(config.job_name(), config.job_id())
        try:
            check_topic_name(topic, system)
        except SamzaError as exc:
            raise ConfigError(
                f"job.name/job.id make an illegal checkpoint topic: {exc}", key="job.name"
            ) from None
        replication = None
        if CHECKPOINT_REPLICATION_KEY in config:
            replication = config.get_int(CHECKPOINT_REPLICATION_KEY)
            if replication < 1:
                raise ConfigError(
                    f"{CHECKPOINT_REPLICATION_KEY} must be >= 1", key=CHECKPOINT_REPLICATION_KEY
                )
        checkpoint_format = CheckpointFormat.from_config(config)
        return KafkaCheckpointManager(settings, topic, checkpoint_format, replication)


__all__ = [
    "CHECKPOINT_REPLICATION_KEY",
    "CHECKPOINT_SYSTEM_KEY",
    "KafkaCheckpointManager",
    "KafkaCheckpointManagerFactory",
    "checkpoint_system",
    "checkpoint_topic",
]
