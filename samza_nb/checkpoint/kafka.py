"""Checkpoints in a Kafka topic, as Samza keeps them.

``task.checkpoint.factory = samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory`` with
``task.checkpoint.system`` (else ``job.default.system``) naming a Kafka system. The topic is
``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` (``_`` → ``-`` in name and id): one partition,
``cleanup.policy=compact``, created at start when missing (replication ``task.checkpoint.replication.factor``,
default the system's ``default.stream.replication.factor``).

One message per task checkpoint. Key: compact JSON
``{"systemstreampartition-grouper-factory": <grouper>, "taskName": <task>, "type": "checkpoint"}``.
Value: compact JSON map, Samza's layout: ``"SystemStreamPartition [<system>, <stream>, <partition>]"`` →
``{"system", "stream", "partition", "offset"}`` per input, and ``"store <name>"`` → ``{"store", "offset"}``
per store changelog. At start the whole topic is read, up to the high watermark the fetch reports, and the
last value per key wins (a null value deletes it), so it is right whether or not the broker compacts.
Checkpoints of another grouper are ignored (their task names mean other partitions).
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any, Final

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.checkpoint.checkpoint import Checkpoint
from samza_nb.errors import CheckpointError, ConfigError, SamzaError
from samza_nb.systems.kafka.admin import KafkaSystemAdmin, check_topic_name
from samza_nb.systems.kafka.clients import bounded, close_quietly
from samza_nb.systems.kafka.config import KafkaSystemConfig

if TYPE_CHECKING:
    from samza_nb.config.config import Config

log = logging.getLogger(__name__)

CHECKPOINT_SYSTEM_KEY: Final[str] = "task.checkpoint.system"
CHECKPOINT_REPLICATION_KEY: Final[str] = "task.checkpoint.replication.factor"
GROUPER_KEY: Final[str] = "job.systemstreampartition.grouper.factory"
CHECKPOINT_TYPE: Final[str] = "checkpoint"


def checkpoint_topic(job_name: str, job_id: str) -> str:
    """``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` with ``_`` → ``-`` in name and id."""
    return f"__samza_checkpoint_ver_1_for_{job_name.replace('_', '-')}_{job_id.replace('_', '-')}"


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


def encode_key(task_name: str, grouper: str) -> bytes:
    """The message key of ``task_name``'s checkpoint."""
    key = {"systemstreampartition-grouper-factory": grouper, "taskName": task_name, "type": CHECKPOINT_TYPE}
    return json.dumps(key, separators=(",", ":"), sort_keys=True).encode("utf-8")


def encode_checkpoint(checkpoint: Checkpoint) -> bytes:
    """The message value of ``checkpoint``."""
    value: dict[str, dict[str, str]] = {}
    for ssp, offset in checkpoint.offsets.items():
        value[f"SystemStreamPartition [{ssp.system}, {ssp.stream}, {ssp.partition}]"] = {
            "system": ssp.system,
            "stream": ssp.stream,
            "partition": str(ssp.partition),
            "offset": offset,
        }
    for store, offset in checkpoint.changelog_offsets.items():
        value[f"store {store}"] = {"store": store, "offset": offset}
    return json.dumps(value, separators=(",", ":"), sort_keys=True).encode("utf-8")


def decode_checkpoint(data: bytes, where: str) -> Checkpoint:
    """The checkpoint in a message value; a CheckpointError naming ``where`` when it is not one."""
    try:
        value = json.loads(data)
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        offsets: dict[SystemStreamPartition, str] = {}
        stores: dict[str, str] = {}
        for entry in value.values():
            if "store" in entry:
                stores[str(entry["store"])] = str(entry["offset"])
            else:
                ssp = SystemStreamPartition(
                    str(entry["system"]), str(entry["stream"]), int(entry["partition"])
                )
                offsets[ssp] = str(entry["offset"])
        return Checkpoint(offsets, stores)
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{where}: not a samza_nb checkpoint: {exc!r}") from None


def decode_key(data: bytes | None) -> dict[str, Any] | None:
    """The key as a dict, or None when it is not a checkpoint key of this format."""
    if data is None:
        return None
    try:
        key = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return key if isinstance(key, dict) else None


class KafkaCheckpointManager:
    """Reads and writes task checkpoints on the checkpoint topic of one job (see the module docstring).

    ``start`` creates the topic if needed and reads it to its end; ``read_last_checkpoint`` answers from
    what was read (and written since); ``write_checkpoint`` returns once the broker acknowledged the
    message (acks=all). Failures, including an unreachable broker after the system's broker timeout, raise
    CheckpointError naming the broker and the topic.
    """

    def __init__(
        self, settings: KafkaSystemConfig, topic: str, grouper: str, replication_factor: int | None = None
    ) -> None:
        self.settings = settings
        self.topic = topic
        self.grouper = grouper
        self._replication = replication_factor
        self._tasks: list[str] = []
        self._checkpoints: dict[str, Checkpoint] = {}
        self._producer: AIOKafkaProducer | None = None
        self._state = "new"

    def register(self, task_name: str) -> None:
        """Announce a task (before ``start``)."""
        if self._state == "stopped":
            raise CheckpointError(f"cannot register task {task_name!r}: {self} is stopped")
        if task_name not in self._tasks:
            self._tasks.append(task_name)

    async def start(self) -> None:
        """Create the topic if missing, read every checkpoint on it, connect the writer."""
        if self._state != "new":
            raise CheckpointError(f"{self} was already started")
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
                    self._apply(record.key, record.value, record.offset)
        finally:
            await close_quietly(consumer)

    def _apply(self, raw_key: bytes | None, raw_value: bytes | None, offset: int) -> None:
        key = decode_key(raw_key)
        if key is None or key.get("type") != CHECKPOINT_TYPE or not isinstance(key.get("taskName"), str):
            return
        grouper = key.get("systemstreampartition-grouper-factory")
        task = key["taskName"]
        if grouper != self.grouper:
            log.warning(
                "checkpoint of task %r at offset %d of %s was written with grouper %r, not %r: ignored",
                task,
                offset,
                self.topic,
                grouper,
                self.grouper,
            )
            return
        if raw_value is None:
            self._checkpoints.pop(task, None)
        else:
            self._checkpoints[task] = decode_checkpoint(raw_value, f"{self.topic} offset {offset}")

    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        """The last checkpoint of ``task_name`` on the topic, or None."""
        self._require_started("read_last_checkpoint")
        return self._checkpoints.get(task_name)

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Write ``checkpoint`` as the task's latest; returns once acknowledged."""
        producer = self._require_started("write_checkpoint")
        if not isinstance(checkpoint, Checkpoint):
            raise CheckpointError(
                f"write_checkpoint of task {task_name!r} needs a Checkpoint, got {checkpoint!r}"
            )
        key = encode_key(task_name, self.grouper)
        value = encode_checkpoint(checkpoint)

        async def deliver() -> None:
            future = await producer.send(self.topic, value, key=key, partition=0)
            await future

        await bounded(
            deliver(),
            self.settings,
            f"writing the checkpoint of task {task_name!r} to topic {self.topic!r}",
            CheckpointError,
        )
        self._checkpoints[task_name] = checkpoint

    async def stop(self) -> None:
        """Disconnect. Idempotent."""
        self._state = "stopped"
        producer, self._producer = self._producer, None
        if producer is not None:
            await close_quietly(producer)

    def _require_started(self, what: str) -> AIOKafkaProducer:
        if self._state != "started" or self._producer is None:
            raise CheckpointError(f"{what} called on {self} (start it first; a stopped one cannot be reused)")
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
        grouper = config.get_str(GROUPER_KEY, "group-by-partition") or "group-by-partition"
        return KafkaCheckpointManager(settings, topic, grouper, replication)


__all__ = [
    "CHECKPOINT_REPLICATION_KEY",
    "CHECKPOINT_SYSTEM_KEY",
    "KafkaCheckpointManager",
    "KafkaCheckpointManagerFactory",
    "checkpoint_system",
    "checkpoint_topic",
    "decode_checkpoint",
    "encode_checkpoint",
    "encode_key",
]
