"""The job's DuckDB files and the stores kept in them.

``stores.<name>.factory = samza_nb.storage.duckdb.DuckDBStoreFactory`` names the store factory exported
here. Inside: the engine (bytes in memory, written in Arrow batches at commit), the state file and its
transaction, the job's files (paths, opening, format), the tables and the committed rows. Everything but
:class:`DuckDBStoreFactory` is internal to ``samza_nb.storage``.
"""

from samza_nb.storage.duckdb.store_factory import DuckDBStoreFactory

__all__ = ["DuckDBStoreFactory"]
