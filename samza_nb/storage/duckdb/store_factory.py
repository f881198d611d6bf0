"""DuckDBStoreFactory: the store of ``stores.<name>.factory = samza_nb.storage.duckdb.DuckDBStoreFactory``.

Each store partition is a table of its task's state file (see :mod:`samza_nb.storage.duckdb.state_file`), so
that store writes and input offsets commit in one transaction. The layers, outermost first:
``[synchronized] → [cached] → serialized → [logged] → DuckDBEngine``.
"""

from __future__ import annotations

from typing import Any

import duckdb

from samza_nb.config import Config
from samza_nb.serde.registry import SerdeRegistry
from samza_nb.storage.base import KeyValueStore, StoreError
from samza_nb.storage.duckdb.engine import DuckDBEngine
from samza_nb.storage.duckdb.job_files import database_path, ensure_schema, job_identity
from samza_nb.storage.duckdb.tables import StorePartitionInfo, ensure_catalogue, record_partition, table_name
from samza_nb.storage.layers.cached import CachedStore
from samza_nb.storage.layers.logged import ChangelogSend, LoggedStore
from samza_nb.storage.layers.serialized import SerializedStore
from samza_nb.storage.layers.synchronized import SynchronizedStore
from samza_nb.storage.registry import StorePartition
from samza_nb.storage.settings import StoreSettings, store_key


class DuckDBStoreFactory:
    """Builds a store partition on the job's DuckDB database, its layers chosen by ``stores.<name>.*``.

    Config: ``key.serde``/``msg.serde`` (serde names; unset = ``bytes``), ``changelog`` (turns the logged
    layer on), ``write.batch.size`` (100,000 waiting changes), ``object.cache.size`` (1000 clean objects;
    0 = no cache), ``preload.max.rows`` (1,000,000), ``thread.safe`` (default:
    ``job.container.thread.pool.size`` > 0).
    """

    def get_store(
        self,
        store_name: str,
        partition: int,
        config: Config,
        connection: duckdb.DuckDBPyConnection,
        send: ChangelogSend | None = None,
    ) -> StorePartition:
        """Open partition ``partition`` of store ``store_name``: ``(the layered store, its engine)``.

        ``connection`` is a connection (or cursor) to the job database, not inside a transaction. The
        database is validated as this job's samza_nb file first (``CheckpointError`` naming the file when it
        is foreign, of another job, or damaged). ``send`` receives every changelog record when
        ``stores.<name>.changelog`` is set (required then). The engine is returned for the commit protocol
        and restore; the task uses the store.
        """
        settings = StoreSettings.from_config(config, store_name)
        key_serde, msg_serde = settings.serdes(SerdeRegistry.from_config(config))
        if settings.changelog is not None and send is None:
            raise StoreError(
                f"store {store_name!r} has a changelog ({store_key(store_name, 'changelog')}="
                f"{settings.changelog!r}) but no changelog sender was given to the store factory",
                store=store_name,
            )
        if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
            raise StoreError(
                f"store {store_name!r}: partition must be an int >= 0, got {partition!r}", store=store_name
            )
        _prepare_database(connection, config, store_name)
        table = table_name(store_name, partition)
        engine = DuckDBEngine(
            connection, table, preload_max_rows=settings.preload_max_rows, store_name=store_name
        )
        try:
            info = StorePartitionInfo(store_name, partition, table, settings.key_serde, settings.msg_serde)
            has_rows = engine.row_count() > 0
            cur = connection.cursor()
            try:
                record_partition(cur, info, table_has_rows=has_rows)
            finally:
                cur.close()
        except BaseException:
            engine.close()
            raise
        bytes_store: KeyValueStore[bytes, bytes] = engine
        if send is not None and settings.changelog is not None:
            bytes_store = LoggedStore(bytes_store, send, store_name)
        store: KeyValueStore[Any, Any] = SerializedStore(bytes_store, key_serde, msg_serde, store_name)
        if settings.object_cache_size > 0:
            store = CachedStore(
                store,
                settings.object_cache_size,
                settings.write_batch_size,
                store_name,
                below_is_empty=lambda: engine.row_count() == 0 and engine.pending_count() == 0,
            )
        if settings.thread_safe:
            store = SynchronizedStore(store)
        return StorePartition(store, engine)


def _prepare_database(connection: duckdb.DuckDBPyConnection, config: Config, store_name: str) -> None:
    """Validate (or initialise) the job database and create the store catalogue."""
    try:
        cur = connection.cursor()
    except duckdb.Error as exc:
        raise StoreError(
            f"store {store_name!r}: the DuckDB connection is unusable: {exc}", store=store_name
        ) from exc
    try:
        path = database_path(cur)
        job_name, job_id = job_identity(config)
        ensure_schema(cur, path, job_name, job_id)
        try:
            ensure_catalogue(cur)
        except duckdb.Error as exc:
            raise StoreError(
                f"store {store_name!r}: creating the store catalogue in {path} failed: {exc}",
                store=store_name,
            ) from exc
    finally:
        cur.close()


__all__ = ["DuckDBStoreFactory"]
