"""SQL over a store's committed contents (what ``%%samza_sql`` runs), and the rows it returns."""

from samza_nb.storage.sql.query import query_store, query_store_on, store_names
from samza_nb.storage.sql.results import QueryResult

__all__ = ["QueryResult", "query_store", "query_store_on", "store_names"]
