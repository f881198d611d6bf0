"""StorageManager: a container's key-value stores, their commit and their restore from changelogs.

Each task's stores live in one DuckDB file per task partition,
``<job.logged.store.base.dir>/<job.name>-<job.id>/stores/partition-<n>.duckdb``, together with the input
and changelog offsets that state reflects; both are written in ONE transaction at every commit. So local
state is exactly-once whatever the checkpoint manager: after a crash the task resumes from the offsets its
state file holds. When that file is missing (or older than the checkpoint) and a store has a changelog, the
store is restored from it, up to the checkpointed changelog offset.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb import crash_points
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.storage.duckdb.paths import job_identity, partition_state_path
from samza_nb.storage.duckdb.paths import state_directory as state_directory
from samza_nb.storage.generation import MARKER_KEY, GenerationMarker
from samza_nb.storage.restore import Restorer, TimeSource
from samza_nb.storage.settings import changelog_stream, configured_store_names
from samza_nb.systems.base import ChangelogStreamAdmin

if TYPE_CHECKING:  # (DuckDB's modules are imported where stores are opened or read: not without stores)
    from samza_nb.api.job_model import TaskModel
    from samza_nb.config import Config
    from samza_nb.observe.bus import EventBus
    from samza_nb.storage.duckdb.state_file import StateFile, TaskOffsets
    from samza_nb.storage.engine import StorageEngine
    from samza_nb.storage.sql.results import QueryResult
    from samza_nb.systems.base import SystemAdmin, SystemFactory, SystemProducer

log = logging.getLogger(__name__)


@dataclass
class TaskStorage:
    """The stores of one task and the file that holds them with the offsets they reflect."""

    task_name: str
    partition: int
    path: Path
    file: StateFile
    stores: dict[str, Any] = field(default_factory=dict)
    engines: dict[str, StorageEngine] = field(default_factory=dict)
    changelogs: dict[str, SystemStreamPartition] = field(default_factory=dict)
    checkpoint: Checkpoint | None = None


QUERY_WAIT_S = 10.0
"""How long closing the stores waits for the store queries running on them (``%%samza_sql``, the
dashboard's store tables)."""


class StorageManager:
    """Opens, restores, commits and closes the stores of a container's tasks.

    Changelog streams are created with ``changelog_partitions`` partitions (the whole job's count, when the
    container runs only some of the job's tasks), else one more than the highest of ``tasks``.
    """

    def __init__(
        self,
        config: Config,
        tasks: Mapping[str, TaskModel],
        producers: Mapping[str, SystemProducer],
        admins: Mapping[str, SystemAdmin],
        factories: Mapping[str, SystemFactory],
        bus: EventBus,
        clock: TimeSource,
        changelog_partitions: int | None = None,
    ) -> None:
        self._config = config
        self._tasks = tasks
        self._changelog_partitions = changelog_partitions
        self._producers = producers
        self._admins = admins
        self._restorer = Restorer(config, admins, factories, bus, clock)
        self.names = configured_store_names(config)
        self._changelogs = {name: changelog_stream(config, name) for name in self.names}
        self._storage: dict[str, TaskStorage] = {}
        self._closed_paths: list[Path] = []
        self._queries = 0  # queries running on the open state files (close waits for them)
        self._queries_done = threading.Condition()
        self._closing = False  # the state files are closing: queries wait
        self._open = False  # every task's stores are open and restored: queries may read them
        for name, stream in self._changelogs.items():
            if stream is not None and stream.system not in admins:
                key = f"stores.{name}.changelog"
                raise ConfigError(
                    f"{key}={config[key]!r}: system {stream.system!r} is not configured "
                    f"(set systems.{stream.system}.samza.factory)",
                    key=key,
                )

    @property
    def has_stores(self) -> bool:
        """True when the job configures any store."""
        return bool(self.names)

    def stores_of(self, task_name: str) -> dict[str, Any]:
        """The stores of ``task_name`` by name (empty without stores)."""
        storage = self._storage.get(task_name)
        return dict(storage.stores) if storage is not None else {}

    # -- start ------------------------------------------------------------------------------------------
    async def start(
        self, checkpoints: Mapping[str, Checkpoint | None], fresh: Collection[str] = ()
    ) -> dict[str, Checkpoint | None]:
        """Open every task's stores, restoring them from changelogs where the local state is missing or
        behind. Returns the checkpoint each task must resume from: its state file's when that is the newer
        one (a crash between the state commit and the checkpoint write), else the given one.

        The tasks in ``fresh`` start over (a reset): their local state and its offsets are dropped. A task
        that resumes from nothing begins a new generation of its changelogs (:mod:`.generation`), so no
        restore replays what was written before."""
        effective = dict(checkpoints)
        if not self.names:
            return effective
        from samza_nb.storage.duckdb.state_file import StateFile
        from samza_nb.storage.registry import load_store_factory

        factories = {name: load_store_factory(self._config, name) for name in self.names}
        partitions = self._changelog_partitions or (
            max((model.changelog_partition for model in self._tasks.values()), default=0) + 1
        )
        for changelog in {s for s in self._changelogs.values() if s is not None}:
            admin = self._admins[changelog.system]
            # A system may create changelogs specially (Kafka: compacted, partition count checked).
            if isinstance(admin, ChangelogStreamAdmin):
                await admin.create_changelog_stream(changelog.stream, partitions)
            else:
                await admin.create_stream(changelog.stream, partitions)
        job_name, job_id = job_identity(self._config)
        for task_name, model in self._tasks.items():
            path = partition_state_path(self._config, model.changelog_partition)
            existed = path.exists()
            file = StateFile(path, job_name, job_id)
            file.open()
            storage = TaskStorage(task_name, model.changelog_partition, path, file)
            self._storage[task_name] = storage
            if existed:
                _refuse_another_tasks_state(file, task_name, model.changelog_partition)
            starts_over = task_name in fresh
            local = _as_checkpoint(file.read_offsets(task_name)) if existed and not starts_over else None
            for name in self.names:
                send = self._changelog_sender(task_name, name, model.changelog_partition)
                store, engine = factories[name].get_store(
                    name, model.changelog_partition, self._config, file.connection.cursor(), send
                )
                storage.stores[name] = store
                storage.engines[name] = engine
                stream = self._changelogs[name]
                if stream is not None:
                    storage.changelogs[name] = SystemStreamPartition(
                        stream.system, stream.stream, model.changelog_partition
                    )
            remote = None if starts_over else checkpoints.get(task_name)
            if starts_over:
                for engine in storage.engines.values():
                    engine.truncate()
            resume = await self._restorer.reconcile(
                task_name, self.names, storage.changelogs, storage.engines, local, remote
            )
            if resume.checkpoint is None:
                await self._begin_generation(task_name, storage)
            if resume.commit or starts_over:
                self._commit_state(storage, resume.checkpoint or Checkpoint())
            if crash_points.ARMED:
                crash_points.reached("restore.done")
            effective[task_name] = storage.checkpoint = resume.checkpoint
        with self._queries_done:
            self._open = True  # (not before: a query would see some tasks' stores, or unrestored ones)
        return effective

    async def _begin_generation(self, task_name: str, storage: TaskStorage) -> None:
        """Send a generation marker to each changelog partition of the task's stores, durably, before the
        task writes (see :mod:`.generation`)."""
        if not storage.changelogs:
            return
        job_name, job_id = job_identity(self._config)
        marker = GenerationMarker.new(job_name, job_id, task_name).encode()
        systems = set()
        for ssp in set(storage.changelogs.values()):
            stream = SystemStream(ssp.system, ssp.stream)
            envelope = OutgoingMessageEnvelope(stream, marker, key=MARKER_KEY, partition=ssp.partition)
            self._producers[ssp.system].send(task_name, envelope)
            systems.add(ssp.system)
        for system in sorted(systems):
            await self._producers[system].flush(task_name)

    def _changelog_sender(
        self, task_name: str, store: str, partition: int
    ) -> Callable[[bytes, bytes | None], None] | None:
        stream = self._changelogs[store]
        if stream is None:
            return None
        producer = self._producers[stream.system]
        send = producer.send

        def send_record(key: bytes, value: bytes | None) -> None:
            send(task_name, OutgoingMessageEnvelope(stream, value, key=key, partition=partition))

        return send_record

    # -- commit -----------------------------------------------------------------------------------------
    def flush(self, task_name: str) -> None:
        """Write the stores' caches down (changelog records go to the producers)."""
        storage = self._storage.get(task_name)
        if storage is not None:
            for store in storage.stores.values():
                store.flush()

    def changelog_ssps(self, task_name: str) -> dict[str, SystemStreamPartition]:
        """Store → the changelog partition of ``task_name``'s store (stores with a changelog only): where a
        checkpoint's changelog offsets live (Samza's checkpoints key them by it)."""
        storage = self._storage.get(task_name)
        return dict(storage.changelogs) if storage is not None else {}

    async def commit(self, task_name: str, offsets: Mapping[SystemStreamPartition, str]) -> dict[str, str]:
        """After :meth:`flush` and the producers' flush: write the stores' pending writes and ``offsets``
        in one transaction. Returns the changelog offsets the state reflects (for the checkpoint)."""
        storage = self._storage.get(task_name)
        if storage is None:
            return {}
        # Only the stores the job has now: an offset of a store removed from the config (or named only by a
        # checkpoint taken over from another job) is left out, not carried forward.
        previous = storage.checkpoint.changelog_offsets if storage.checkpoint else {}
        changelog_offsets = {name: offset for name, offset in previous.items() if name in storage.changelogs}
        for name, ssp in storage.changelogs.items():
            metadata = (await self._admins[ssp.system].get_metadata([ssp.stream]))[ssp.stream][ssp.partition]
            if metadata.newest is not None:
                changelog_offsets[name] = metadata.newest
        checkpoint = Checkpoint(offsets, changelog_offsets)
        self._commit_state(storage, checkpoint)
        storage.checkpoint = checkpoint
        return changelog_offsets

    def _commit_state(self, storage: TaskStorage, checkpoint: Checkpoint) -> None:
        with storage.file.transaction() as tx:
            for engine in storage.engines.values():
                tx.write_store(engine)
            if crash_points.ARMED:
                crash_points.reached("state.mid-transaction")
            tx.write_offsets(storage.task_name, checkpoint.offsets, checkpoint.changelog_offsets)

    # -- reading ----------------------------------------------------------------------------------------
    async def query(self, store: str, sql: str | None = None) -> QueryResult:
        """``sql`` over the committed contents of ``store`` across this container's tasks (the store is
        the relation ``<store>(key, value, partition)``); runs on a worker thread, never blocking the job."""
        if store not in self.names:
            known = ", ".join(self.names) or "none"
            raise SamzaError(f"no store {store!r} in this job (stores: {known})")
        with self._queries_done:
            # While the stores close, neither the open files nor the closed ones can be read: wait.
            self._queries_done.wait_for(lambda: not self._closing, timeout=QUERY_WAIT_S)
            opened = self._storage.values() if self._open else ()
            connections = [storage.file.connection for storage in opened]
            closed_paths = list(self._closed_paths)
            if connections:
                self._queries += 1
        if connections:
            return await asyncio.to_thread(self._query_open, connections, store, sql)
        if not closed_paths:
            raise SamzaError(f"store {store!r} has not been opened yet: the job has not started its tasks")
        from samza_nb.storage.sql.query import query_store

        # Stopped: the state files are closed; read them read-only (consistent as of the last commit).
        return await asyncio.to_thread(query_store, closed_paths, store, sql, self._config)

    def _query_open(self, connections: list[Any], store: str, sql: str | None) -> QueryResult:
        from samza_nb.storage.sql.query import query_store_on

        try:
            return query_store_on(connections, store, sql, config=self._config)
        finally:
            with self._queries_done:
                self._queries -= 1
                self._queries_done.notify_all()

    def partitions(self) -> dict[str, int]:
        """Task name -> the partition of its stores (its changelog partition), while the stores are open:
        empty until every task's stores are open and restored, and once they close."""
        if not self._open:
            return {}
        return {name: storage.partition for name, storage in self._storage.items()}

    @contextlib.contextmanager
    def reading(self) -> Iterator[dict[str, tuple[int, Any]]]:
        """Task name -> (store partition, DuckDB connection of its state file), for reads of the committed
        state on the caller's thread (fresh cursors: never waiting for the writer); closing the stores
        waits until the block ends. Empty once they closed, and until every task's stores are open and
        restored (never some tasks' files: their union would pass for the container's whole state)."""
        with self._queries_done:
            self._queries_done.wait_for(lambda: not self._closing, timeout=QUERY_WAIT_S)
            opened = self._storage.items() if self._open else ()
            files = {name: (s.partition, s.file.connection) for name, s in opened}
            if files:
                self._queries += 1
        try:
            yield files
        finally:
            if files:
                with self._queries_done:
                    self._queries -= 1
                    self._queries_done.notify_all()

    # -- stop -------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close every store and state file, once the queries running on them are done (DuckDB refuses
        to close a connection in use; at most ``QUERY_WAIT_S``); uncommitted writes are dropped (they are
        redone from the last checkpoint)."""
        with self._queries_done:
            if not self._queries_done.wait_for(lambda: self._queries == 0, timeout=QUERY_WAIT_S):
                log.warning("closing the stores while %d queries still run on them", self._queries)
            storages = list(self._storage.values())
            self._storage.clear()
            self._open = False
            self._closing = True
        try:
            self._close_all(storages)
        finally:
            with self._queries_done:
                self._closed_paths = [storage.path for storage in storages]
                self._closing = False
                self._queries_done.notify_all()

    @staticmethod
    def _close_all(storages: list[TaskStorage]) -> None:
        for storage in storages:
            for name, engine in storage.engines.items():
                try:
                    engine.close()
                except Exception as exc:  # closing must go on for the others
                    log.error("closing store %s of task %s failed: %s", name, storage.task_name, exc)
            storage.file.close()


def _as_checkpoint(offsets: TaskOffsets | None) -> Checkpoint | None:
    return None if offsets is None else Checkpoint(offsets.offsets, offsets.changelog_offsets)


def _refuse_another_tasks_state(file: StateFile, task_name: str, partition: int) -> None:
    """A state file holds one task's state: when the job model gives its changelog partition to another
    task (the job's tasks changed), reading it would hand that state to the wrong task."""
    owners = file.recorded_tasks()
    if owners and task_name not in owners:
        raise ConfigError(
            f"state file {file.path} (changelog partition {partition}) holds the state of task "
            f"{', '.join(repr(o) for o in sorted(owners))}, but the job model now gives changelog partition "
            f"{partition} to task {task_name!r}: the job's tasks changed (an input's partition count or the "
            "grouper), and each task's state lives in its changelog partition. Restore the partition "
            "counts and grouper, or start afresh under a new job.id (its state starts empty)",
            key="task.inputs",
        )
