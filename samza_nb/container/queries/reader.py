"""Looking into a running container's stores from another thread (``%samza_get``, the coordinator's
``/stores`` endpoints).

A key's **live** value (uncommitted writes included) is read through the store the task itself uses, on the
container's event loop between two slices of messages (the loop yields every ``slice_ms``), so the read
never races the task's writes and costs the loop one ``get``: asked on the loop's thread (the container
process's query service, :mod:`.server`) it is read there and then; from another thread it is handed to
the loop, and the caller waits for it. A **committed** value, and a store's
committed rows (for SQL that the coordinator unions over every container), are read from the state files
on the caller's thread, each in its own read transaction (DuckDB's MVCC): the loop never waits for them.

A key is looked up first in the partition its bytes hash to (Kafka's default partitioner over the job's
task partitions: where a keyed input message of that key is processed), then in every other partition of
the container, so a key a task keeps under another partition is found too; the answer names the
container, task and partition that answered.
"""

from __future__ import annotations

import base64
import binascii
import concurrent.futures
import json
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.serde.registry import SerdeRegistry
from samza_nb.storage.settings import StoreSettings
from samza_nb.systems.partitioner import key_partition

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.container.container import SamzaContainer
    from samza_nb.serde.base import Serde
    from samza_nb.storage.manager import StorageManager

KEY_WAIT_S = 5.0
"""How long a live lookup waits for the container's loop to take it (a task stuck in one message)."""
PARTITIONS_HEADER = "X-Samza-Partitions"
"""The header of a container's rows answer naming the store partitions it covers (comma-separated): the
coordinator checks them against the job model, so a part missing from its union is refused, not left out."""


class StoreNotReady(SamzaError):
    """The store cannot be read yet or any more (its container has not opened it, or has stopped)."""


class UnknownStore(SamzaError):
    """The job has no store of that name (the message lists the stores it has)."""


def error_status(exc: SamzaError) -> int:
    """The HTTP status a query's error is answered with: 503 not ready, 404 no such store, else 400."""
    return 503 if isinstance(exc, StoreNotReady) else 404 if isinstance(exc, UnknownStore) else 400


@dataclass(frozen=True)
class KeyAnswer:
    """One key lookup: whether ``store`` had ``key``, its ``value`` (live, or as of the last commit when
    ``committed``), and the ``container``, ``task`` and ``partition`` that answered (None when not found);
    ``searched``: the partitions looked in."""

    store: str
    key: Any
    found: bool
    value: Any = None
    committed: bool = False
    container: str | None = None
    task: str | None = None
    partition: int | None = None
    searched: tuple[int, ...] = ()

    def describe(self) -> str:
        """One line: ``counts['a'] = 3 (live; container 1, task 'Partition 1', partition 1)``."""
        kind = "committed" if self.committed else "live"
        if not self.found:
            where = ", ".join(str(p) for p in self.searched) or "none"
            return f"{self.store}[{self.key!r}]: no such key ({kind}; searched partitions {where})"
        return (
            f"{self.store}[{self.key!r}] = {self.value!r} ({kind}; container {self.container}, "
            f"task {self.task!r}, partition {self.partition})"
        )

    __str__ = describe

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (keys and values that JSON cannot carry appear as text, bytes as UTF-8)."""
        return {
            "store": self.store,
            "key": plain(self.key),
            "found": self.found,
            "value": plain(self.value),
            "committed": self.committed,
            "container": self.container,
            "task": self.task,
            "partition": self.partition,
            "searched": list(self.searched),
        }

    @classmethod
    def from_dict(cls, data: Any) -> KeyAnswer:
        """The answer :meth:`to_dict` made; a SamzaError for anything else."""
        try:
            return cls(
                str(data["store"]),
                data["key"],
                bool(data["found"]),
                data.get("value"),
                bool(data.get("committed", False)),
                data.get("container"),
                data.get("task"),
                data.get("partition"),
                tuple(int(p) for p in data.get("searched", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SamzaError(f"not a key lookup's answer: {str(data)[:120]}") from exc


def plain(value: Any) -> Any:
    """``value`` as JSON can carry it: bytes as UTF-8 text (else ``0x`` hex), containers recursively, any
    other object as its repr."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        data = bytes(value)
        try:
            return data.decode()
        except UnicodeDecodeError:
            return "0x" + data.hex()
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return repr(value)


def store_serdes(config: Config, store: str) -> tuple[Serde, Serde]:
    """The key and msg serdes ``store`` is written with (a ConfigError naming a bad key)."""
    return StoreSettings.from_config(config, store).serdes(SerdeRegistry.from_config(config))


@dataclass(frozen=True)
class LookupRequest:
    """A ``POST /get`` of a container's query service: ``{"store", "key": <key bytes, base64>, "partition":
    n or null, "committed": bool}``."""

    store: str
    raw: bytes
    partition: int | None
    committed: bool

    @classmethod
    def parse(cls, body: bytes) -> LookupRequest:
        """The request in ``body``; a SamzaError saying what a lookup is otherwise."""
        try:
            request = json.loads(body)
            partition = request.get("partition")
            return cls(
                str(request["store"]),
                base64.b64decode(request["key"], validate=True),
                None if partition is None else int(partition),
                bool(request.get("committed", False)),
            )
        except (ValueError, KeyError, TypeError, AttributeError, binascii.Error) as exc:
            raise SamzaError(f"a lookup is JSON with store and key (base64): {exc}") from None

    def answer(self, reader: StoreReader) -> KeyAnswer:
        """The lookup, by ``reader``."""
        key = reader.serdes.of(self.store)[0].from_bytes(self.raw)
        return reader.get(self.store, key, partition=self.partition, committed=self.committed)


class SerdeCache:
    """The key and msg serdes of each store of ``config``, each made once (making them reads the config)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._serdes: dict[str, tuple[Serde, Serde]] = {}

    def of(self, store: str) -> tuple[Serde, Serde]:
        """:func:`store_serdes` of ``store``, made at its first call."""
        serdes = self._serdes.get(store)
        if serdes is None:
            serdes = self._serdes[store] = store_serdes(self.config, store)
        return serdes


def key_bytes(serde: Serde, store: str, key: Any) -> bytes:
    """``key`` serialized by ``serde``, ``store``'s key serde (a SamzaError naming the store when it cannot
    be)."""
    try:
        return serde.to_bytes(key)
    except Exception as exc:
        raise SamzaError(
            f"store {store!r}: key {key!r} cannot be serialized by its key serde: {exc}"
        ) from exc


def owning_partition(key: bytes, partitions: int) -> int:
    """The task partition a key's bytes hash to among ``partitions`` (Kafka's default partitioner)."""
    return key_partition(key, max(partitions, 1))


class StoreReader:
    """Point lookups and committed rows of one container's stores; call from any thread but its loop's."""

    def __init__(self, container: SamzaContainer) -> None:
        self._container = container
        self.serdes = SerdeCache(container.config)
        """The serdes of the container's stores."""

    @property
    def config(self) -> Config:
        """The container's config."""
        return self._container.config

    def get(
        self, store: str, key: Any, *, partition: int | None = None, committed: bool = False
    ) -> KeyAnswer:
        """``key`` in ``store``: live (through the task's store, on the loop) or ``committed``. Partition
        ``partition`` first (default: the one ``key`` hashes to), then this container's others."""
        storage = self._storage(store)
        raw = key_bytes(self.serdes.of(store)[0], store, key)
        owned = storage.partitions()
        if partition is None:
            model = self._container.job_model
            partition = owning_partition(raw, model.max_changelog_partitions if model else len(owned))
        order = sorted(owned, key=lambda task: (owned[task] != partition, owned[task]))
        searched = tuple(owned[task] for task in order)
        cid = self._container.container_id
        if committed:
            found = self._committed(storage, store, raw, order)
        else:
            found = self._live(storage, store, key, order)
        if found is None:
            return KeyAnswer(store, key, False, None, committed, searched=searched)
        task, value = found
        return KeyAnswer(store, key, True, value, committed, cid, task, owned[task], searched)

    def rows(self, store: str) -> tuple[Any, tuple[int, ...]]:
        """The committed rows of ``store`` in this container's tasks: an Arrow table ``(key, value,
        partition)``, and the partitions it covers (every one of the container's tasks: a task whose state
        file does not have the store yet is a :class:`StoreNotReady` naming it, never left out)."""
        import pyarrow as pa

        from samza_nb.storage.sql.query import store_rows

        storage = self._storage(store)
        cid = self._container.container_id
        with storage.reading() as files:
            if not files:
                raise StoreNotReady(f"container {cid} has not opened its stores yet (or has closed them)")
            tables = []
            for task, (partition, connection) in sorted(files.items(), key=lambda item: item[1][0]):
                table = store_rows(connection, store, self._container.config)
                if table is None:
                    raise StoreNotReady(
                        f"container {cid} has no store {store!r} in the state file of task {task!r} "
                        f"(partition {partition})"
                    )
                tables.append(table)
            partitions = tuple(sorted(partition for partition, _ in files.values()))
        return pa.concat_tables(tables, promote_options="permissive"), partitions

    def _storage(self, store: str) -> StorageManager:
        storage = self._container.storage
        cid = self._container.container_id
        if storage is None or not storage.partitions():
            raise StoreNotReady(f"container {cid} has not opened its stores yet (or has closed them)")
        if store not in storage.names:
            known = ", ".join(storage.names) or "none"
            raise UnknownStore(f"no store {store!r} in this job (stores: {known})")
        return storage

    def _committed(
        self, storage: StorageManager, store: str, raw: bytes, order: list[str]
    ) -> tuple[str, Any] | None:
        from samza_nb.storage.sql.point import committed_value

        value_serde = self.serdes.of(store)[1]
        with storage.reading() as files:
            for task in order:
                if task not in files:
                    continue
                partition, connection = files[task]
                value = committed_value(connection, store, partition, raw)
                if value is not None:
                    return task, value_serde.from_bytes(value)
        return None

    def _live(
        self, storage: StorageManager, store: str, key: Any, order: list[str]
    ) -> tuple[str, Any] | None:
        run_loop = self._container.run_loop
        loop = run_loop.state.loop if run_loop is not None else None
        cid = self._container.container_id
        if loop is None or loop.is_closed() or not loop.is_running():
            raise StoreNotReady(f"container {cid} is not running: its live values cannot be read")

        def look() -> tuple[str, Any] | None:  # on the loop, between two slices, as the task itself reads
            for task in order:
                stores = storage.stores_of(task)
                value = stores[store].get(key) if store in stores else None
                if value is not None:
                    return task, value
            return None

        if run_loop is not None and threading.get_ident() == run_loop.state.thread_id:
            return look()  # the container's query service, on its loop: read here, no hand-over
        future: concurrent.futures.Future[tuple[str, Any] | None] = concurrent.futures.Future()

        def deliver() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(look())
                except BaseException as exc:
                    future.set_exception(exc)

        loop.call_soon_threadsafe(deliver)  # (a plain callback: runs at the loop's next turn, no task made)
        try:
            return future.result(KEY_WAIT_S)
        except TimeoutError:
            future.cancel()
            raise SamzaError(
                f"container {cid} did not take the lookup of {key!r} in {store!r} within {KEY_WAIT_S:g} s "
                "(a message is taking that long)"
            ) from None


__all__ = [
    "KEY_WAIT_S",
    "PARTITIONS_HEADER",
    "KeyAnswer",
    "LookupRequest",
    "SerdeCache",
    "StoreNotReady",
    "StoreReader",
    "UnknownStore",
    "error_status",
    "key_bytes",
    "owning_partition",
    "plain",
    "store_serdes",
]
