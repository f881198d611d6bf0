"""The job's DuckDB files and the stores kept in them.

``stores.<name>.factory = samza_nb.storage.duckdb.DuckDBStoreFactory`` names the store factory exported
here. Inside: the engine (bytes in memory, written in Arrow batches at commit), the state file and its
transaction, the job's files (paths, opening, format), the tables and the committed rows. Everything but
:class:`DuckDBStoreFactory` is internal to ``samza_nb.storage``. The factory (and DuckDB with it) is loaded
when first asked for: a job without stores reaches the paths of its files without DuckDB.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.storage.duckdb.store_factory import DuckDBStoreFactory


def __getattr__(name: str) -> Any:
    """:class:`DuckDBStoreFactory`, imported (with DuckDB) on first use."""
    if name == "DuckDBStoreFactory":
        from samza_nb.storage.duckdb.store_factory import DuckDBStoreFactory

        return DuckDBStoreFactory
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DuckDBStoreFactory"]
