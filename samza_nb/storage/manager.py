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
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from samza_nb.api.streams import OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.checkpoint.checkpoint import Checkpoint
from samza_nb.checkpoint.duckdb import DuckDBCheckpointManager, job_database_path
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.observe import events as ev
from samza_nb.storage.changelog import ChangelogReader
from samza_nb.storage.sql import QueryResult, query_store, query_store_on_async

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.container.clock import Clock
    from samza_nb.coordinator.job_model import TaskModel
    from samza_nb.observe.bus import EventBus
    from samza_nb.systems.base import SystemAdmin, SystemFactory, SystemProducer

log = logging.getLogger(__name__)


def store_names(config: Config) -> list[str]:
    """The stores configured with ``stores.<name>.factory``."""
    names = {
        key[len("stores.") : -len(".factory")]
        for key in config
        if key.startswith("stores.") and key.endswith(".factory")
    }
    return sorted(name for name in names if name and "." not in name)


def changelog_stream(config: Config, store: str) -> SystemStream | None:
    """The changelog of ``store`` (``stores.<name>.changelog``: "system.stream", or a stream on
    ``job.changelog.system``), if it has one."""
    key = f"stores.{store}.changelog"
    raw = config.get_str(key)
    if not raw or not raw.strip():
        return None
    raw = raw.strip()
    if "." in raw:
        system, _, stream = raw.partition(".")
        if system and stream:
            return SystemStream(system, stream)
    default_system = config.get_str("job.changelog.system") or config.get_str("job.default.system")
    if not default_system:
        raise ConfigError(
            f"{key}={raw!r} names no system: write <system>.<stream> or set job.changelog.system", key=key
        )
    return SystemStream(default_system, raw)


def state_directory(config: Config) -> Path:
    """The directory holding the job's store files."""
    return job_database_path(config).parent / "stores"


@dataclass
class TaskStorage:
    """The stores of one task and the file that holds them with the offsets they reflect."""

    task_name: str
    partition: int
    path: Path
    file: DuckDBCheckpointManager
    stores: dict[str, Any] = field(default_factory=dict)
    engines: dict[str, Any] = field(default_factory=dict)
    changelogs: dict[str, SystemStreamPartition] = field(default_factory=dict)
    checkpoint: Checkpoint | None = None


class StorageManager:
    """Opens, restores, commits and closes the stores of a container's tasks."""

    def __init__(
        self,
        config: Config,
        tasks: Mapping[str, TaskModel],
        producers: Mapping[str, SystemProducer],
        admins: Mapping[str, SystemAdmin],
        factories: Mapping[str, SystemFactory],
        bus: EventBus,
        clock: Clock,
    ) -> None:
        self._config = config
        self._tasks = tasks
        self._producers = producers
        self._admins = admins
        self._factories = factories
        self._bus = bus
        self._clock = clock
        self.names = store_names(config)
        self._changelogs = {name: changelog_stream(config, name) for name in self.names}
        self._storage: dict[str, TaskStorage] = {}
        self._closed_paths: list[Path] = []
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
    async def start(self, checkpoints: Mapping[str, Checkpoint | None]) -> dict[str, Checkpoint | None]:
        """Open every task's stores, restoring them from changelogs where the local state is missing or
        behind. Returns the checkpoint each task must resume from: its state file's when that is the newer
        one (a crash between the state commit and the checkpoint write), else the given one."""
        effective = dict(checkpoints)
        if not self.names:
            return effective
        from samza_nb.storage.registry import load_store_factory

        factories = {name: load_store_factory(self._config, name) for name in self.names}
        partitions = max((model.changelog_partition for model in self._tasks.values()), default=0) + 1
        for changelog in {s for s in self._changelogs.values() if s is not None}:
            admin = self._admins[changelog.system]
            # A system may create changelogs specially (Kafka: compacted, partition count checked).
            create = getattr(admin, "create_changelog_stream", admin.create_stream)
            await create(changelog.stream, partitions)
        directory = state_directory(self._config)
        job_name = self._config.get_str("job.name", "samza-nb-job")
        job_id = self._config.get_str("job.id", "1")
        for task_name, model in self._tasks.items():
            path = directory / f"partition-{model.changelog_partition}.duckdb"
            existed = path.exists()
            file = DuckDBCheckpointManager(path, job_name, job_id)
            file.register(task_name)
            file.start_sync()
            storage = TaskStorage(task_name, model.changelog_partition, path, file)
            self._storage[task_name] = storage
            local = file.read_last_checkpoint_sync(task_name) if existed else None
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
            effective[task_name] = await self._reconcile(storage, local, checkpoints.get(task_name))
            storage.checkpoint = effective[task_name]
        return effective

    async def _reconcile(
        self, storage: TaskStorage, local: Checkpoint | None, remote: Checkpoint | None
    ) -> Checkpoint | None:
        """Decide where the task resumes and bring its stores there."""
        restore_to: dict[str, tuple[str | None, str]] = {}
        if remote is not None:
            for name, ssp in storage.changelogs.items():
                target = remote.changelog_offsets.get(name)
                if target is None:
                    continue
                have = local.changelog_offsets.get(name) if local is not None else None
                admin = self._admins[ssp.system]
                if have is None or admin.offset_comparator(have, target) < 0:
                    restore_to[name] = (have, target)
        if local is not None and not restore_to:
            if remote is not None and local != remote:
                log.info(
                    "task %s resumes from its state file's offsets (newer than the checkpoint)",
                    storage.task_name,
                )
            return local
        if local is None and remote is not None:
            lost = [name for name in self.names if name not in storage.changelogs]
            if lost:
                log.warning(
                    "task %s has a checkpoint but no local state, and stores %s have no changelog: "
                    "they start empty",
                    storage.task_name,
                    ", ".join(lost),
                )
        for name, (have, target) in restore_to.items():
            await self._restore(storage, name, have, target)
        if remote is not None or restore_to:
            self._commit_state(storage, remote or Checkpoint())
        return remote

    async def _restore(self, storage: TaskStorage, store: str, after: str | None, target: str) -> None:
        ssp = storage.changelogs[store]
        admin = self._admins[ssp.system]
        engine = storage.engines[store]
        metadata = (await admin.get_metadata([ssp.stream])).get(ssp.stream, {}).get(ssp.partition)
        if metadata is None or metadata.newest is None:
            raise SamzaError(
                f"cannot restore store {store!r} of task {storage.task_name!r}: changelog {ssp} is empty, "
                f"but the checkpoint says it reached offset {target}"
            )
        start = admin.offset_after(after) if after is not None else (metadata.oldest or "0")
        total = _distance(start, target)
        reader = ChangelogReader(self._factories[ssp.system], ssp, self._config, admin)
        restored = 0
        async for batch in reader.read(start, target):
            engine.restore_batch(batch)
            restored += len(batch)
            if self._bus.active:
                self._bus.publish(
                    ev.StoreRestoreProgress(
                        self._clock.now_ms(), storage.task_name, store, restored, total, False
                    )
                )
        if self._bus.active:
            self._bus.publish(
                ev.StoreRestoreProgress(self._clock.now_ms(), storage.task_name, store, restored, total, True)
            )
        log.info("restored store %s of task %s: %d changelog records", store, storage.task_name, restored)

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

    async def commit(self, task_name: str, offsets: Mapping[SystemStreamPartition, str]) -> dict[str, str]:
        """After :meth:`flush` and the producers' flush: write the stores' pending writes and ``offsets``
        in one transaction. Returns the changelog offsets the state reflects (for the checkpoint)."""
        storage = self._storage.get(task_name)
        if storage is None:
            return {}
        changelog_offsets = dict(storage.checkpoint.changelog_offsets) if storage.checkpoint else {}
        for name, ssp in storage.changelogs.items():
            metadata = (await self._admins[ssp.system].get_metadata([ssp.stream]))[ssp.stream][ssp.partition]
            if metadata.newest is not None:
                changelog_offsets[name] = metadata.newest
        checkpoint = Checkpoint(offsets, changelog_offsets)
        self._commit_state(storage, checkpoint)
        storage.checkpoint = checkpoint
        return changelog_offsets

    def _commit_state(self, storage: TaskStorage, checkpoint: Checkpoint) -> None:
        cursor = storage.file.connection.cursor()
        try:
            cursor.begin()
            for engine in storage.engines.values():
                engine.write_pending(cursor)
            storage.file.write_checkpoint_in(cursor, storage.task_name, checkpoint)
            cursor.commit()
        except BaseException:
            try:
                # A failed COMMIT has already ended the transaction: a rollback would then fail and
                # hide the real error.
                with contextlib.suppress(duckdb.Error):
                    cursor.rollback()
            finally:
                for engine in storage.engines.values():
                    engine.discard_pending_failed()
            raise
        finally:
            cursor.close()
        for engine in storage.engines.values():
            engine.mark_committed()

    # -- reading ----------------------------------------------------------------------------------------
    async def query(self, store: str, sql: str | None = None) -> QueryResult:
        """``sql`` over the committed contents of ``store`` across this container's tasks (the store is
        the relation ``<store>(key, value, partition)``); runs on a worker thread, never blocking the job."""
        if store not in self.names:
            known = ", ".join(self.names) or "none"
            raise SamzaError(f"no store {store!r} in this job (stores: {known})")
        if self._storage:
            connections = [storage.file.connection for storage in self._storage.values()]
            return await query_store_on_async(connections, store, sql, config=self._config)
        if not self._closed_paths:
            raise SamzaError(f"store {store!r} has not been opened yet: the job has not started its tasks")
        # Stopped: the state files are closed; read them read-only (consistent as of the last commit).
        return await asyncio.to_thread(query_store, self._closed_paths, store, sql, self._config)

    # -- stop -------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close every store and state file; uncommitted writes are dropped (they are redone from the
        last checkpoint)."""
        for storage in self._storage.values():
            for name, engine in storage.engines.items():
                try:
                    engine.close()
                except Exception as exc:  # closing must go on for the others
                    log.error("closing store %s of task %s failed: %s", name, storage.task_name, exc)
            storage.file.stop_sync()
        self._closed_paths = [storage.path for storage in self._storage.values()]
        self._storage.clear()


def _distance(start: str, target: str) -> int:
    try:
        return max(int(target) - int(start) + 1, 0)
    except ValueError:
        return 0


def delete_local_state(config: Config) -> None:
    """Remove the job's store files (a changelog restores them at the next start)."""
    shutil.rmtree(state_directory(config), ignore_errors=True)
