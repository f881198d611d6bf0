"""Store names reach DuckDB SQL only as quoted identifiers: a name that is SQL works as a name."""

from __future__ import annotations

import duckdb
import pytest

from samza_nb.storage import DuckDBStoreFactory, query_store_on, store_names

from .conftest import commit
from .test_sql import config

HOSTILE = ['x"; DROP TABLE y; --', "a b", "select", "x'; DROP TABLE y; --", 'q""q', "ünï"]


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_store_name_is_a_name(conn: duckdb.DuckDBPyConnection, name: str) -> None:
    conn.execute("CREATE TABLE y (i INTEGER)")
    conn.execute("INSERT INTO y VALUES (42)")
    cfg = config(**{name: ("string", "int")})
    store, engine = DuckDBStoreFactory().get_store(name, 0, cfg, conn)
    store.put_all([("a", 1), ("b", 2)])
    store.delete("b")
    store.flush()
    commit(conn, engine)
    assert store.get("a") == 1 and store.get("b") is None
    assert sorted(store.all()) == [("a", 1)]
    engine.close()
    assert name in store_names(conn)
    assert query_store_on(conn, name).rows == [("a", 1, 0)]
    assert conn.execute("SELECT i FROM y").fetchall() == [(42,)]  # y survived
