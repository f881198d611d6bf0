"""The system plug-in point: a SystemFactory builds a system's admin, consumer and producer.

An input system (Kafka, in-memory, a file, a Spark DataFrame) implements these Protocols; the container only
talks to systems through them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.api.metadata import OffsetReset, SSPMetadata
    from samza_nb.api.streams import (
        IncomingMessageEnvelope,
        OutgoingMessageEnvelope,
        SystemStream,
        SystemStreamPartition,
    )
    from samza_nb.config import Config


@runtime_checkable
class SystemAdmin(Protocol):
    """Knows a system's streams: partition metadata, offset order, stream creation."""

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """For each stream, its partitions' oldest/newest/upcoming offsets. Unknown stream → SamzaError."""
        ...

    def offset_comparator(self, a: str, b: str) -> int:
        """Order of two offsets of one partition (negative, zero, positive)."""
        ...

    def offset_after(self, offset: str) -> str:
        """The offset of the message that follows ``offset`` in its partition."""
        ...

    async def create_stream(self, stream: str, partitions: int) -> None:
        """Create ``stream`` with ``partitions`` partitions if it does not exist."""
        ...


@runtime_checkable
class ChangelogStreamAdmin(SystemAdmin, Protocol):
    """An admin that creates store changelogs its own way (Kafka: compacted topics, partition count
    checked); for other admins a changelog is created with :meth:`SystemAdmin.create_stream`."""

    async def create_changelog_stream(self, stream: str, partitions: int) -> None:
        """Create changelog ``stream`` with ``partitions`` partitions if it does not exist; an existing one
        with another partition count is a SamzaError (each partition is one task's store)."""
        ...


@runtime_checkable
class StreamDeletingAdmin(SystemAdmin, Protocol):
    """An admin that lists and deletes its system's streams (Kafka: topics): what ``samza-nb clean
    --topics`` asks to remove the streams a job left."""

    async def stream_names(self) -> set[str]:
        """Every stream the system holds now (never creates one)."""
        ...

    async def delete_streams(self, streams: Collection[str]) -> None:
        """Delete ``streams`` (one already gone is no error); a failure is a SamzaError naming the stream."""
        ...


@runtime_checkable
class FeedingSystemAdmin(SystemAdmin, Protocol):
    """An admin whose streams are fed by the job's driver while the job runs (a Spark streaming DataFrame
    written into the durable log by ``foreachBatch``). Whoever plans the job model (the job coordinator,
    or a container that plans its own) calls :meth:`start_feeding` after planning and
    :meth:`stop_feeding` when the job ends; containers that got their model from a coordinator never do,
    so a stream is fed once per job wherever its containers run."""

    async def start_feeding(self, streams: Collection[str]) -> None:
        """Start feeding those of ``streams`` (the job's inputs on this system) that are fed; idempotent.
        A feed that cannot start raises a SamzaError naming the stream."""
        ...

    async def stop_feeding(self) -> None:
        """Stop every feed this admin started (each stops after its current batch is durable);
        idempotent."""
        ...


@runtime_checkable
class SystemConsumer(Protocol):
    """Reads registered partitions from their starting offsets, in batches."""

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` starting at ``offset`` (the first offset to return). Called before start."""
        ...

    async def start(self) -> None:
        """Connect; called once after every register."""
        ...

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The next available messages of ``ssps`` in offset order, waiting up to ``timeout`` seconds for
        any. A bounded partition's last message is followed by its end-of-stream envelope."""
        ...

    async def stop(self) -> None:
        """Disconnect; called once."""
        ...


@runtime_checkable
class ResettingConsumer(SystemConsumer, Protocol):
    """A consumer that moves a partition whose position does not exist (beyond the log's end, before its
    oldest message) to another offset by its system's reset policy, and reports each move. The container
    checks for the capability once, takes the reports after every poll (before the messages of that poll)
    and moves the partition's starting offset and low watermark with them, so every message from the new
    position is processed and the next checkpoint is written from it. A position that no policy permits
    moving is a SystemConsumersError naming the partition, the offset and the log's end."""

    def take_resets(self) -> Sequence[OffsetReset]:
        """The resets since the last call, oldest first (usually none: cheap to call, no allocation)."""
        ...


@runtime_checkable
class SystemProducer(Protocol):
    """Sends messages to a system's streams; ``send`` is safe from any thread."""

    async def start(self) -> None:
        """Connect; called once before the first send."""
        ...

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Queue ``envelope`` for delivery; ``source`` names the sending task. Errors surface at the latest
        on the next flush."""
        ...

    async def flush(self, source: str) -> None:
        """Return once every message ``source`` sent so far is delivered; raise if any failed."""
        ...

    async def stop(self) -> None:
        """Flush and disconnect; called once."""
        ...


@runtime_checkable
class BatchProducer(SystemProducer, Protocol):
    """A producer that takes many envelopes in one call, whoever sent them (its ``send`` needs the sender
    only to name it in errors; its ``flush`` has nothing to wait for per sender). The container hands the
    output of the tasks on its loop thread to such a producer in one call per slice; it checks for the
    capability once, when it builds its output buffer."""

    def send_batch(self, envelopes: Sequence[OutgoingMessageEnvelope]) -> None:
        """The same as ``send`` of each of ``envelopes`` in order, all or nothing: when one of them
        cannot be sent, raise and send none."""
        ...


@runtime_checkable
class ValueBatchProducer(BatchProducer, Protocol):
    """A batch producer that also takes plain values for one stream in one call: what tasks sent with
    ``collector.send_to`` (no key) reaches it without an envelope built per message. Checked for once,
    when the container builds its output buffer; other producers get the envelopes."""

    def send_values(self, stream: SystemStream, messages: Sequence[Any]) -> None:
        """The same as ``send_batch`` of ``OutgoingMessageEnvelope(stream, message)`` for each of
        ``messages`` in order, all or nothing."""
        ...


@runtime_checkable
class CommittingProducer(SystemProducer, Protocol):
    """A producer whose output counts only once the checkpoint covering it is written (an exactly-once
    sink). The container calls ``recover`` for each task before its first message, and ``prepare_commit``
    / ``commit_done`` around writing each of its checkpoints (after ``flush``)."""

    async def recover(self, source: str, checkpoint: Checkpoint | None, *, reset: bool) -> None:
        """Settle what task ``source`` left uncommitted, given its last written ``checkpoint``; ``reset``:
        its inputs start over (``reset.offset``), so its earlier output is superseded."""
        ...

    async def prepare_commit(self, source: str, checkpoint: Checkpoint) -> None:
        """Before ``checkpoint`` of task ``source`` is written: make what it flushed recoverable."""
        ...

    async def commit_done(self, source: str, checkpoint: Checkpoint) -> None:
        """After ``checkpoint`` of task ``source`` was written: what it flushed before is committed."""
        ...


@runtime_checkable
class SystemFactory(Protocol):
    """Builds the parts of one system (``systems.<name>.samza.factory``)."""

    def get_admin(self, system_name: str, config: Config) -> SystemAdmin:
        """The admin of system ``system_name``."""
        ...

    def get_consumer(self, system_name: str, config: Config) -> SystemConsumer:
        """A consumer of system ``system_name``."""
        ...

    def get_producer(self, system_name: str, config: Config) -> SystemProducer:
        """A producer of system ``system_name``."""
        ...


@runtime_checkable
class InProcessSystemFactory(SystemFactory, Protocol):
    """A system whose streams live in this process's memory (the in-memory system).

    What that implies, and what the planner and the runners rely on: a message reaches its consumer as the
    very Python object sent, so the system's streams need no serde (an operator job's intermediate streams
    on it carry objects, not bytes); and no other process sees its streams, so a job run as several
    processes cannot read them. A system without this capability carries bytes that other processes can
    read (the durable log, Kafka, files).
    """

    def namespace(self, system_name: str, config: Config) -> str:
        """The name of the in-process space that holds system ``system_name``'s streams (systems of one
        namespace share their streams)."""
        ...
