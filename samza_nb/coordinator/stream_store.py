"""The coordinator stream of a job, read and written through any system's SystemFactory.

Stream ``__samza_coordinator_<job.name>_<job.id>`` (``_`` → ``-`` in name and id), one partition, on the
system ``job.coordinator.system``, else ``job.default.system``, else the embedded durable log ``log``.
Only the SystemFactory protocols are used (admin: create the stream, its metadata, offset order; a consumer
from a given offset; a producer with send and flush), so the stream works on Kafka, the durable log and the
in-memory system alike. Keys and values are the messages' own bytes: the stream's serdes are forced to
``bytes`` (``systems.<s>.streams.<stream>.samza.key.serde`` / ``.msg.serde``) so a system-wide serde never
touches them.

Reading: :meth:`CoordinatorStreamStore.start` reads the stream from its oldest offset up to the newest
offset its admin reports at that moment; :meth:`~CoordinatorStreamStore.catch_up` reads on from there to the
newest offset again. Messages are bootstrapped as :mod:`samza_nb.coordinator.bootstrap` describes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.coordinator.bootstrap import (
    Bootstrapped,
    changelog_mapping_of,
    config_of,
    container_hosts_of,
    task_containers_of,
)
from samza_nb.coordinator.driver_claim import DriverClaim
from samza_nb.coordinator.messages import CoordinatorStreamMessage
from samza_nb.errors import SamzaError
from samza_nb.systems.base import (
    ChangelogStreamAdmin,
    SystemAdmin,
    SystemConsumer,
    SystemFactory,
    SystemProducer,
)
from samza_nb.systems.registry import system_factory

if TYPE_CHECKING:
    from samza_nb.config import Config

COORDINATOR_SYSTEM_KEY: Final[str] = "job.coordinator.system"
DEFAULT_COORDINATOR_SYSTEM: Final[str] = "log"
"""The system of the coordinator stream when neither job.coordinator.system nor job.default.system is set:
the embedded durable log."""

SOURCE: Final[str] = "coordinator-stream-store"
"""The producer source name the store flushes."""

POLL_TIMEOUT_S: Final[float] = 0.2
STALL_TIMEOUT_S: Final[float] = 60.0
"""Reading fails when no message arrives for this long while the stream still has messages to read."""


def coordinator_stream_name(job_name: str, job_id: str = "1") -> str:
    """``__samza_coordinator_<job_name>_<job_id>`` with ``_`` → ``-`` in name and id (Samza's name)."""
    return f"__samza_coordinator_{job_name.replace('_', '-')}_{job_id.replace('_', '-')}"


def coordinator_system(config: Mapping[str, str]) -> str:
    """``job.coordinator.system``, else ``job.default.system``, else ``log`` (the durable log)."""
    for key in (COORDINATOR_SYSTEM_KEY, "job.default.system"):
        value = (config.get(key) or "").strip()
        if value:
            return value
    return DEFAULT_COORDINATOR_SYSTEM


class CoordinatorStreamStore:
    """A job's coordinator stream: bootstrapped on :meth:`start`, kept up with :meth:`catch_up`, written
    with :meth:`send` (durable when it returns). Use on one asyncio loop; ``start`` once, ``stop`` at the
    end (idempotent)."""

    def __init__(self, config: Config) -> None:
        self.system = coordinator_system(config)
        self.stream = coordinator_stream_name(config.job_name(), config.job_id())
        self.ssp = SystemStreamPartition(self.system, self.stream, 0)
        prefix = f"systems.{self.system}.streams.{self.stream}.samza"
        # The messages' bytes pass unchanged whatever serde the system uses for other streams.
        self._config = config.with_overrides({f"{prefix}.key.serde": "bytes", f"{prefix}.msg.serde": "bytes"})
        self._factory: SystemFactory | None = None
        self._admin: SystemAdmin | None = None
        self._producer: SystemProducer | None = None
        self._view = Bootstrapped()
        self._position: str | None = None  # the next offset to read; None: from the oldest
        self._state = "new"
        self._reading = asyncio.Lock()  # catch-ups of the coordinator and of the driver's claim take turns

    def __str__(self) -> str:
        return f"coordinator stream {self.system}.{self.stream}"

    # -- lifecycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Create the stream if it is missing (one partition), read all of it and connect the writer."""
        if self._state != "new":
            raise SamzaError(f"{self} was already started")
        self._state = "starting"
        factory = self._factory = system_factory(self._config, self.system)
        admin = self._admin = factory.get_admin(self.system, self._config)
        if isinstance(admin, ChangelogStreamAdmin):  # a compacted one-partition stream where it matters
            await admin.create_changelog_stream(self.stream, 1)
        else:
            await admin.create_stream(self.stream, 1)
        await self._read_to_newest()
        producer = factory.get_producer(self.system, self._config)
        await producer.start()
        self._producer = producer
        self._state = "started"

    async def catch_up(self) -> None:
        """Read what was written to the stream since the last read, up to its newest offset now."""
        self._require_started("catch_up")
        async with self._reading:
            await self._read_to_newest()

    async def send(self, messages: Sequence[CoordinatorStreamMessage]) -> None:
        """Write ``messages`` in order; they are durable (flushed) when this returns, and already part of
        this store's bootstrapped view."""
        producer = self._require_started("send")
        system_stream = SystemStream(self.system, self.stream)
        for message in messages:
            key, value = message.encode()
            producer.send(SOURCE, OutgoingMessageEnvelope(system_stream, value, key=key, partition=0))
        await producer.flush(SOURCE)
        for message in messages:
            self._view.apply(message)

    async def stop(self) -> None:
        """Flush and disconnect the writer. Idempotent."""
        self._state = "stopped"
        producer, self._producer = self._producer, None
        if producer is not None:
            await producer.stop()

    # -- views ----------------------------------------------------------------------------------------
    def bootstrapped(self, type: str | None = None) -> list[CoordinatorStreamMessage]:
        """The bootstrapped messages (of ``type`` only, when given), oldest first."""
        return self._view.messages(type)

    def config(self) -> dict[str, str]:
        """The config the stream holds (``set-config``, the last value per key)."""
        return config_of(self._view)

    def changelog_mapping(self) -> dict[str, int]:
        """Task name → changelog partition (``set-changelog``)."""
        return changelog_mapping_of(self._view)

    def container_hosts(self) -> dict[str, str]:
        """Container id → host it last ran on (``set-container-host-assignment``)."""
        return container_hosts_of(self._view)

    def driver(self) -> DriverClaim | None:
        """The driver's claim on the job in force (``set-job-driver``; :mod:`.driver_claim`)."""
        return self._view.driver.current

    def task_containers(self) -> dict[str, str]:
        """Task name → container id (``set-task-container-assignment``)."""
        return task_containers_of(self._view)

    # -- reading --------------------------------------------------------------------------------------
    async def _read_to_newest(self) -> None:
        assert self._admin is not None and self._factory is not None
        admin = self._admin
        partitions = (await admin.get_metadata([self.stream]))[self.stream]
        if set(partitions) != {0}:
            raise SamzaError(
                f"{self} must have exactly one partition, but it has {len(partitions)}: "
                "delete it or pick another job.coordinator.system"
            )
        meta = partitions[0]
        newest = meta.newest
        if newest is None or meta.oldest is None:
            return
        start = self._position
        if start is None or admin.offset_comparator(start, meta.oldest) < 0:
            start = meta.oldest
        if admin.offset_comparator(start, newest) > 0:
            return
        consumer = self._factory.get_consumer(self.system, self._config)
        consumer.register(self.ssp, start)
        await consumer.start()
        try:
            await self._consume(consumer, admin, newest)
        finally:
            await consumer.stop()

    async def _consume(self, consumer: SystemConsumer, admin: SystemAdmin, newest: str) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STALL_TIMEOUT_S
        while True:
            batch = (await consumer.poll([self.ssp], POLL_TIMEOUT_S)).get(self.ssp, ())
            for envelope in batch:
                if envelope.is_end_of_stream:
                    return
                where = f"{self} offset {envelope.offset}"
                self._view.apply(
                    CoordinatorStreamMessage.decode(
                        _bytes(envelope.key, where, "key"), _value(envelope.message, where), where
                    )
                )
                self._position = admin.offset_after(envelope.offset)
                if admin.offset_comparator(envelope.offset, newest) >= 0:
                    return
            if batch:
                deadline = loop.time() + STALL_TIMEOUT_S
            elif loop.time() > deadline:
                raise SamzaError(
                    f"{self}: no message arrived for {STALL_TIMEOUT_S:.0f} s at offset {self._position} "
                    f"though its newest offset is {newest}"
                )

    def _require_started(self, what: str) -> SystemProducer:
        if self._state != "started" or self._producer is None:
            raise SamzaError(
                f"{what} called on {self} ({self._state}; start it first, a stopped one cannot be reused)"
            )
        return self._producer


def _bytes(data: Any, where: str, what: str) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    if isinstance(data, str):
        return data.encode("utf-8")
    raise SamzaError(
        f"{where}: the {what} is a {type(data).__name__}, not the bytes of a coordinator message"
    )


def _value(data: Any, where: str) -> bytes | None:
    return None if data is None else _bytes(data, where, "value")


__all__ = [
    "COORDINATOR_SYSTEM_KEY",
    "DEFAULT_COORDINATOR_SYSTEM",
    "CoordinatorStreamStore",
    "coordinator_stream_name",
    "coordinator_system",
]
