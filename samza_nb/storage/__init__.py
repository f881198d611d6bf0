"""Key-value stores: the KeyValueStore protocol, the DuckDB engine and the layers over it.

Layers, outermost first: cached (LRU object cache, batched writes) → serialized (serdes) → logged
(changelog) → :class:`DuckDBEngine` (bytes in memory, written to DuckDB in Arrow batches at commit). The
commit and the restore drive the engine through the :class:`StorageEngine` protocol only.
:class:`DuckDBStoreFactory` composes them from ``stores.<name>.*``; :func:`query_store_on` /
:func:`query_store` run SQL over a store's committed contents.
"""

from samza_nb.storage.base import KeyValueStore, StoreError
from samza_nb.storage.duckdb.engine import DuckDBEngine
from samza_nb.storage.duckdb.state_file import StateFile, StateTransaction, TaskOffsets
from samza_nb.storage.duckdb.store_factory import DuckDBStoreFactory
from samza_nb.storage.duckdb.tables import table_name
from samza_nb.storage.engine import StorageEngine
from samza_nb.storage.layers.cached import CachedStore
from samza_nb.storage.layers.logged import ChangelogSend, LoggedStore
from samza_nb.storage.layers.serialized import SerializedStore
from samza_nb.storage.layers.synchronized import SynchronizedStore
from samza_nb.storage.registry import StoreFactory, StorePartition, load_store_factory
from samza_nb.storage.settings import StoreSettings, changelog_stream, configured_store_names
from samza_nb.storage.sql.query import query_store, query_store_on, store_names
from samza_nb.storage.sql.results import QueryResult

__all__ = [
    "CachedStore",
    "ChangelogSend",
    "DuckDBEngine",
    "DuckDBStoreFactory",
    "KeyValueStore",
    "LoggedStore",
    "QueryResult",
    "SerializedStore",
    "StateFile",
    "StateTransaction",
    "StorageEngine",
    "StoreError",
    "StoreFactory",
    "StorePartition",
    "StoreSettings",
    "SynchronizedStore",
    "TaskOffsets",
    "changelog_stream",
    "configured_store_names",
    "load_store_factory",
    "query_store",
    "query_store_on",
    "store_names",
    "table_name",
]
