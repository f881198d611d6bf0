"""Key-value stores: the KeyValueStore protocol, the DuckDB engine and the layers over it.

Exported: what a task, a custom store or a query touches (the store protocols and the plug-in point, the
DuckDB store factory, SQL over committed state); the layers and DuckDB files inside are internal.

Layers, outermost first: cached (LRU object cache, batched writes) → serialized (serdes) → logged
(changelog) → :class:`DuckDBEngine` (bytes in memory, written to DuckDB in Arrow batches at commit). The
commit and the restore drive the engine through the :class:`StorageEngine` protocol only.
:class:`DuckDBStoreFactory` composes them from ``stores.<name>.*``; :func:`query_store_on` /
:func:`query_store` run SQL over a store's committed contents.

The exports are loaded when first asked for (the DuckDB ones with DuckDB): a job without stores imports
the storage layer's modules it runs without loading DuckDB.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.storage.base import KeyValueStore, StoreError
    from samza_nb.storage.duckdb.store_factory import DuckDBStoreFactory
    from samza_nb.storage.engine import StorageEngine
    from samza_nb.storage.registry import StoreFactory, StorePartition
    from samza_nb.storage.sql.query import query_store, query_store_on, store_names
    from samza_nb.storage.sql.results import QueryResult

_EXPORTS = {
    "DuckDBStoreFactory": "samza_nb.storage.duckdb.store_factory",
    "KeyValueStore": "samza_nb.storage.base",
    "QueryResult": "samza_nb.storage.sql.results",
    "StorageEngine": "samza_nb.storage.engine",
    "StoreError": "samza_nb.storage.base",
    "StoreFactory": "samza_nb.storage.registry",
    "StorePartition": "samza_nb.storage.registry",
    "query_store": "samza_nb.storage.sql.query",
    "query_store_on": "samza_nb.storage.sql.query",
    "store_names": "samza_nb.storage.sql.query",
}


def __getattr__(name: str) -> Any:
    """An export of ``__all__``, imported from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "DuckDBStoreFactory",
    "KeyValueStore",
    "QueryResult",
    "StorageEngine",
    "StoreError",
    "StoreFactory",
    "StorePartition",
    "query_store",
    "query_store_on",
    "store_names",
]
