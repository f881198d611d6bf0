"""SQL over stores: decoded relations, committed-only visibility, read-only, never blocking the writer."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import duckdb
import pytest

from samza_nb.config import Config
from samza_nb.errors import CheckpointError, SamzaError
from samza_nb.storage import (
    DuckDBStoreFactory,
    query_store,
    query_store_on,
    store_names,
)
from tests.requirements import require

from .conftest import commit

FACTORY = "samza_nb.storage.duckdb.DuckDBStoreFactory"


def config(**stores: tuple[str, str]) -> Config:
    values = {"job.name": "job", "serializers.registry.upper.class": f"{__name__}.UpperSerde"}
    for name, (key_serde, msg_serde) in stores.items():
        values[f"stores.{name}.factory"] = FACTORY
        values[f"stores.{name}.key.serde"] = key_serde
        values[f"stores.{name}.msg.serde"] = msg_serde
    return Config(values)


class UpperSerde:
    def to_bytes(self, obj: Any) -> bytes:
        return str(obj).upper().encode()

    def from_bytes(self, data: bytes) -> Any:
        return data.decode()


def fill(
    conn: duckdb.DuckDBPyConnection, cfg: Config, name: str, partitions: dict[int, dict[Any, Any]]
) -> None:
    for partition, entries in partitions.items():
        store, engine = DuckDBStoreFactory().get_store(name, partition, cfg, conn)
        store.put_all(list(entries.items()))
        store.flush()
        commit(conn, engine)
        engine.close()


def test_store_relation_has_decoded_columns_for_every_partition(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(counts=("string", "int"))
    fill(conn, cfg, "counts", {0: {"a": 1, "b": -2}, 1: {"c": 3}})
    result = query_store_on(conn, "counts")
    assert result.columns == ("key", "value", "partition")
    assert result.rows == [("a", 1, 0), ("b", -2, 0), ("c", 3, 1)]
    total = query_store_on(conn, "counts", "SELECT sum(value) AS total, count(*) AS n FROM counts")
    assert total.rows == [(2, 3)]
    assert total.columns == ("total", "n")
    assert len(total) == 1


@pytest.mark.parametrize(
    ("serdes", "entries", "expected"),
    [
        (("long", "json"), {-5: {"n": 1}, 7: [1, 2]}, [(-5, {"n": 1}), (7, [1, 2])]),
        (("bytes", "string"), {b"\x00\xff": "é"}, [(b"\x00\xff", "é")]),
        (
            ("int", "long"),
            {2**31 - 1: -(2**63), -(2**31): 2**63 - 1},
            [(-(2**31), 2**63 - 1), (2**31 - 1, -(2**63))],
        ),
    ],
)
def test_builtin_serdes_decode_in_sql(
    conn: duckdb.DuckDBPyConnection, serdes: tuple[str, str], entries: dict[Any, Any], expected: list[Any]
) -> None:
    cfg = config(s=serdes)
    fill(conn, cfg, "s", {0: entries})
    rows = query_store_on(conn, "s", "SELECT key, value FROM s ORDER BY key").rows
    if serdes[1] == "json":
        rows = [(k, json.loads(v)) for k, v in rows]
    assert rows == expected


def test_json_values_can_be_queried_as_json(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(users=("string", "json"))
    fill(conn, cfg, "users", {0: {"ann": {"age": 31}, "bob": {"age": 12}}})
    result = query_store_on(conn, "users", "SELECT key FROM users WHERE (value->>'age')::INT > 18")
    assert result.rows == [("ann",)]


def test_other_serdes_are_decoded_in_python(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(shout=("upper", "double"))
    fill(conn, cfg, "shout", {0: {"hi": 1.5}, 2: {"yo": -2.0}})
    result = query_store_on(conn, "shout", "SELECT key, value, partition FROM shout ORDER BY key", config=cfg)
    assert result.rows == [("HI", 1.5, 0), ("YO", -2.0, 2)]
    with pytest.raises(SamzaError, match="upper"):
        query_store_on(conn, "shout")  # without the config, the user serde is unknown


def test_pending_writes_are_invisible_until_committed(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(counts=("string", "int"))
    store, engine = DuckDBStoreFactory().get_store("counts", 0, cfg, conn)
    store.put("a", 1)
    store.flush()  # in the engine's pending writes, not in DuckDB
    assert query_store_on(conn, "counts").rows == []
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)
    assert query_store_on(conn, "counts").rows == [], "an open commit transaction is not visible"
    cur.commit()
    engine.mark_committed()
    assert query_store_on(conn, "counts").rows == [("a", 1, 0)]


def test_a_query_neither_waits_for_nor_blocks_the_writer(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(counts=("string", "int"))
    fill(conn, cfg, "counts", {0: {"a": 1}})
    store, engine = DuckDBStoreFactory().get_store("counts", 0, cfg, conn)
    store.put("a", 2)
    store.flush()
    cur = conn.cursor()
    cur.begin()
    engine.write_pending(cur)  # the writer holds an open transaction with a change to "a"
    results: list[Any] = []
    reader = threading.Thread(target=lambda: results.append(query_store_on(conn, "counts").rows))
    reader.start()
    reader.join(10)
    assert results == [[("a", 1, 0)]], "the reader saw the last commit without waiting"
    cur.commit()  # and the writer commits despite the reader
    engine.mark_committed()
    assert query_store_on(conn, "counts").rows == [("a", 2, 0)]


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM counts",
        "INSERT INTO store__counts__p0 VALUES ('x', 'y')",
        "SELECT 1; SELECT 2",
        "COMMIT",
        "COPY (SELECT 1) TO 'out.csv'",
        "DROP TABLE store__counts__p0",
    ],
)
def test_queries_are_read_only(conn: duckdb.DuckDBPyConnection, sql: str) -> None:
    cfg = config(counts=("string", "int"))
    fill(conn, cfg, "counts", {0: {"a": 1}})
    with pytest.raises(SamzaError, match="exactly one SELECT"):
        query_store_on(conn, "counts", sql)
    assert query_store_on(conn, "counts").rows == [("a", 1, 0)]


def test_errors_name_the_store(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(counts=("string", "int"))
    fill(conn, cfg, "counts", {0: {"a": 1}})
    with pytest.raises(SamzaError, match=r"no store 'nope'.*stores: counts"):
        query_store_on(conn, "nope")
    with pytest.raises(SamzaError, match=r"query on store 'counts' failed"):
        query_store_on(conn, "counts", "SELECT missing_column FROM counts")
    with pytest.raises(SamzaError, match="does not parse"):
        query_store_on(conn, "counts", "SELEC oops")
    assert store_names(conn) == ["counts"]


def test_query_store_reads_a_file_read_only(db_path: Path, conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(counts=("string", "int"))
    fill(conn, cfg, "counts", {0: {"a": 1}})
    with pytest.raises(SamzaError, match="query_store_on"):
        query_store(db_path, "counts")  # the file is open for writing in this process
    conn.close()
    assert query_store(db_path, "counts").rows == [("a", 1, 0)]
    assert query_store(db_path, "counts", config=cfg).rows == [("a", 1, 0)]
    with pytest.raises(CheckpointError, match="other"):
        query_store(db_path, "counts", config=Config({"job.name": "other"}))


def test_query_store_refuses_missing_corrupt_and_foreign_files(tmp_path: Path) -> None:
    missing = tmp_path / "missing.duckdb"
    with pytest.raises(CheckpointError, match="does not exist"):
        query_store(missing, "counts")
    garbage = tmp_path / "garbage.duckdb"
    garbage.write_bytes(b"not a database at all" * 200)
    with pytest.raises(CheckpointError, match=rf"{garbage}.*not a DuckDB database"):
        query_store(garbage, "counts")
    assert garbage.read_bytes() == b"not a database at all" * 200, "the file is left alone"
    foreign = tmp_path / "foreign.duckdb"
    other = duckdb.connect(str(foreign))
    other.execute("CREATE TABLE invoices (id INTEGER)")
    other.close()
    with pytest.raises(CheckpointError, match=rf"{foreign}.*without the samza_nb marker"):
        query_store(foreign, "counts")


def test_result_conversions(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config(counts=("string", "int"))
    fill(conn, cfg, "counts", {0: {"a": 1, "b": 2}})
    result = query_store_on(conn, "counts")
    assert result.to_arrow().to_pylist() == [
        {"key": "a", "value": 1, "partition": 0},
        {"key": "b", "value": 2, "partition": 0},
    ]
    assert "<td>a</td>" in result._repr_html_()
    pandas = require("pandas", "DataFrames need pandas (samza_nb[notebook])")
    frame = result.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame["value"]) == [1, 2]


def test_one_file_per_partition_is_queried_as_one_store(tmp_path: Path) -> None:
    cfg = config(counts=("string", "int"), users=("string", "json"))
    connections = []
    paths = []
    for partition in (0, 1):
        path = tmp_path / f"partition-{partition}.duckdb"
        conn = duckdb.connect(str(path))
        fill(conn, cfg, "counts", {partition: {f"k{partition}": partition + 10}})
        connections.append(conn)
        paths.append(path)
    fill(connections[1], cfg, "users", {1: {"ann": {"age": 31}}})
    result = query_store_on(connections, "counts", "SELECT key, value, partition FROM counts ORDER BY key")
    assert result.rows == [("k0", 10, 0), ("k1", 11, 1)]
    assert query_store_on(connections, "users", "SELECT value->>'age' FROM users").rows == [("31",)]
    assert store_names(connections) == ["counts", "users"]
    with pytest.raises(SamzaError, match=r"no store 'nope'.*counts, users"):
        query_store_on(connections, "nope")
    for conn in connections:
        conn.close()
    assert query_store(paths, "counts", "SELECT sum(value) FROM counts").rows == [(21,)]
