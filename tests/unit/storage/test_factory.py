"""DuckDBStoreFactory and load_store_factory: layers from config, tables, and the errors of item 6."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.config import Config
from samza_nb.container.clock import SystemClock
from samza_nb.errors import CheckpointError, ConfigError
from samza_nb.observe.bus import EventBus
from samza_nb.storage import DuckDBStoreFactory, StoreError
from samza_nb.storage.duckdb.job_files import ensure_schema
from samza_nb.storage.layers.cached import CachedStore
from samza_nb.storage.layers.logged import LoggedStore
from samza_nb.storage.layers.serialized import SerializedStore
from samza_nb.storage.layers.synchronized import SynchronizedStore
from samza_nb.storage.manager import StorageManager
from samza_nb.storage.registry import load_store_factory
from samza_nb.storage.settings import StoreSettings, changelog_stream, configured_store_names

from .conftest import commit, table_rows

FACTORY = "samza_nb.storage.duckdb.DuckDBStoreFactory"


def config(store: str = "counts", **extra: Any) -> Config:
    values = {
        "job.name": "job",
        f"stores.{store}.factory": FACTORY,
        f"stores.{store}.key.serde": "string",
        f"stores.{store}.msg.serde": "int",
    }
    values.update({k.replace("__", "."): v for k, v in extra.items()})
    return Config(values)


def layers(store: Any) -> list[type]:
    found = []
    while store is not None:
        found.append(type(store))
        store = getattr(store, "inner", None)
    return found


def open_store(
    conn: duckdb.DuckDBPyConnection, cfg: Config, store: str = "counts", partition: int = 0, send: Any = None
) -> Any:
    return DuckDBStoreFactory().get_store(store, partition, cfg, conn, send)


def test_layers_follow_config(conn: duckdb.DuckDBPyConnection) -> None:
    from samza_nb.storage.duckdb.engine import DuckDBEngine

    store, engine = open_store(conn, config())
    assert layers(store) == [CachedStore, SerializedStore, DuckDBEngine]
    assert isinstance(engine, DuckDBEngine)
    assert (store.cache_size, store.write_batch_size) == (1000, 100_000)

    sent: list[Any] = []
    cfg = config(
        **{"stores__counts__changelog": "kafka.counts-changelog", "stores__counts__object__cache__size": "0"}
    )
    store, _ = open_store(conn, cfg, partition=1, send=lambda k, v: sent.append((k, v)))
    assert layers(store) == [SerializedStore, LoggedStore, DuckDBEngine]
    store.put("a", 1)
    assert sent == [(b"a", b"\x00\x00\x00\x01")]

    cfg = config(**{"job__container__thread__pool__size": "2"})
    store, _ = open_store(conn, cfg, partition=2)
    assert layers(store) == [SynchronizedStore, CachedStore, SerializedStore, DuckDBEngine]


def test_one_table_per_store_and_partition_with_awkward_names(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = config('page-views.v2"x')
    for partition in (0, 3):
        store, engine = open_store(conn, cfg, 'page-views.v2"x', partition)
        store.put(f"p{partition}", partition)
        store.flush()
        commit(conn, engine)
    assert table_rows(conn, 'store__page-views.v2""x__p3') == {b"p3": b"\x00\x00\x00\x03"}
    assert table_rows(conn, 'store__page-views.v2""x__p0') == {b"p0": b"\x00\x00\x00\x00"}


def test_committed_state_survives_reopening_the_file(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True)
    for run in range(2):
        conn = duckdb.connect(str(db_path))
        store, engine = open_store(conn, config())
        assert store.get("views") == (None if run == 0 else 41)
        store.put("views", (store.get("views") or 0) + 41)
        store.put("uncommitted", 1) if run == 1 else None
        if run == 0:
            store.flush()
            commit(conn, engine)
        engine.close()
        conn.close()
    conn = duckdb.connect(str(db_path))
    store, _ = open_store(conn, config())
    assert store.get("views") == 41
    assert store.get("uncommitted") is None
    conn.close()


def test_default_serdes_are_bytes_and_errors_name_the_unset_key(conn: duckdb.DuckDBPyConnection) -> None:
    cfg = Config({"job.name": "job", "stores.raw.factory": FACTORY, "stores.raw.object.cache.size": "0"})
    store, _ = open_store(conn, cfg, "raw")
    store.put(b"k", b"v")
    assert store.get(b"k") == b"v"
    with pytest.raises(
        StoreError, match=r"store 'raw'.*'page-1'.*stores\.raw\.key\.serde is not set"
    ) as info:
        store.put("page-1", b"v")
    assert info.value.key == "page-1"


def test_an_unencodable_value_surfaces_naming_store_and_key(conn: duckdb.DuckDBPyConnection) -> None:
    store, _ = open_store(conn, config())
    store.put("page-1", "three")
    with pytest.raises(StoreError, match=r"store 'counts'.*'three'.*key 'page-1'") as info:
        store.flush()
    assert (info.value.store, info.value.key) == ("counts", "page-1")


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ({"stores__counts__key__serde": "avro"}, "stores.counts.key.serde"),
        ({"stores__counts__msg__serde": "nope"}, "stores.counts.msg.serde"),
        ({"stores__counts__write__batch__size": "0"}, "stores.counts.write.batch.size"),
        ({"stores__counts__object__cache__size": "-1"}, "stores.counts.object.cache.size"),
        ({"stores__counts__write__batch__size": "many"}, "stores.counts.write.batch.size"),
        ({"serializers__registry__int__class": "no.such.Serde"}, "serializers.registry.int.class"),
    ],
)
def test_config_errors_name_the_key(conn: duckdb.DuckDBPyConnection, extra: dict[str, str], key: str) -> None:
    with pytest.raises(ConfigError) as info:
        open_store(conn, config(**extra))
    assert info.value.key == key
    assert "counts" in str(info.value) or key in str(info.value)


def test_a_changelog_without_a_sender_is_an_error(conn: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(StoreError, match=r"store 'counts' has a changelog"):
        open_store(conn, config(**{"stores__counts__changelog": "kafka.c"}))


def test_changelog_stream_parsing() -> None:
    settings = StoreSettings.from_config(
        config(**{"stores__counts__changelog": "kafka.counts-log"}), "counts"
    )
    assert settings.changelog_stream(Config()) == SystemStream("kafka", "counts-log")
    bare = StoreSettings.from_config(config(**{"stores__counts__changelog": "counts-log"}), "counts")
    assert bare.changelog_stream(Config({"job.changelog.system": "kafka2"})) == SystemStream(
        "kafka2", "counts-log"
    )
    assert bare.changelog_stream(Config({"job.default.system": "k3"})) == SystemStream("k3", "counts-log")
    # Neither job.changelog.system nor job.default.system: the embedded durable log, system "log".
    assert bare.changelog_stream(Config()) == SystemStream("log", "counts-log")


@pytest.mark.parametrize("value", [".counts", "kafka.", "."])
def test_a_changelog_without_system_or_stream_is_a_config_error(value: str) -> None:
    cfg = config(**{"stores__counts__changelog": value})
    with pytest.raises(ConfigError, match=r"stores\.counts\.changelog") as info:
        changelog_stream(cfg, "counts")
    assert info.value.key == "stores.counts.changelog"
    assert changelog_stream(config(), "counts") is None


def test_the_storage_manager_refuses_a_changelog_without_a_system() -> None:
    cfg = config(**{"stores__counts__changelog": ".counts", "job__default__system": "kafka"})
    with pytest.raises(ConfigError) as info:
        StorageManager(cfg, {}, {}, {}, {}, EventBus(), SystemClock())
    assert info.value.key == "stores.counts.changelog"


def test_reopening_with_another_serde_is_refused_when_data_exists(conn: duckdb.DuckDBPyConnection) -> None:
    store, engine = open_store(conn, config())
    open_store(conn, config(**{"stores__counts__msg__serde": "long"}), partition=5)  # empty: fine
    store.put("a", 1)
    store.flush()
    commit(conn, engine)
    with pytest.raises(ConfigError, match=r"written with the 'int' serde") as info:
        open_store(conn, config(**{"stores__counts__msg__serde": "long"}))
    assert info.value.key == "stores.counts.msg.serde"


def test_a_foreign_duckdb_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "samza.duckdb"
    other = duckdb.connect(str(path))
    other.execute("CREATE TABLE invoices (id INTEGER)")
    with pytest.raises(CheckpointError, match=str(path)):
        open_store(other, config())
    tables = {r[0] for r in other.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert tables == {"invoices"}
    other.close()


def test_another_jobs_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "samza.duckdb"
    conn = duckdb.connect(str(path))
    ensure_schema(conn, str(path), "other-job", "1")
    with pytest.raises(CheckpointError, match="other-job"):
        open_store(conn, config())
    conn.close()


def test_configured_store_names() -> None:
    cfg = Config({"stores.a.factory": FACTORY, "stores.b-2.factory": FACTORY, "stores.c.key.serde": "string"})
    assert configured_store_names(cfg) == ["a", "b-2"]


class NotAFactory:
    pass


def test_load_store_factory() -> None:
    assert isinstance(load_store_factory(config(), "counts"), DuckDBStoreFactory)
    with pytest.raises(ConfigError) as info:
        load_store_factory(config(), "missing")
    assert info.value.key == "stores.missing.factory"
    for path, needle in (
        ("samza_nb.storage.duckdb.NoSuchFactory", "has no"),
        ("no_such_pkg.Factory", "module 'no_such_pkg' not found"),
        (f"{__name__}.NotAFactory", "not a store factory"),
    ):
        with pytest.raises(ConfigError, match=needle) as info:
            load_store_factory(Config({"stores.x.factory": path}), "x")
        assert info.value.key == "stores.x.factory"


@pytest.mark.parametrize("preload", ["1000000", "0"])
def test_the_cache_sees_what_a_restore_put_below_before_the_first_read(
    conn: duckdb.DuckDBPyConnection, preload: str
) -> None:
    # A new store's cache answers misses as absent without reading below; a restore (records pending in
    # the engine, or committed to a table that is not mirrored) comes before the task's first read and
    # must be seen by it.
    cfg = config(**{"stores__counts__preload__max__rows": preload})
    store, engine = open_store(conn, cfg)
    engine.restore_batch([(b"restored", (5).to_bytes(4, "big")), (b"gone", None)])
    if preload == "0":
        commit(conn, engine)
    assert store.get("restored") == 5 and store.get("gone") is None
    assert store.get_all(["restored", "absent"]) == {"restored": 5}
    fresh, fresh_engine = open_store(conn, cfg, partition=1)
    assert fresh.get("absent") is None and fresh_engine.row_count() == 0
    fresh.put("k", 1)
    fresh.flush()
    commit(conn, fresh_engine)
    assert fresh.get("k") == 1 and fresh.get("absent") is None
