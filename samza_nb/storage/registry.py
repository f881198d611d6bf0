"""The store plug-in point: what ``stores.<name>.factory`` names, and finding it from config."""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

from duckdb import DuckDBPyConnection as Connection

from samza_nb.config import Config
from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError
from samza_nb.storage.base import KeyValueStore
from samza_nb.storage.engine import StorageEngine
from samza_nb.storage.layers.logged import ChangelogSend
from samza_nb.storage.settings import store_key


class StorePartition(NamedTuple):
    """One opened partition of a store: what the task uses, and the engine the commit and restore drive."""

    store: KeyValueStore[Any, Any]
    engine: StorageEngine


@runtime_checkable
class StoreFactory(Protocol):
    """What ``stores.<name>.factory`` names: builds one partition of a store."""

    def get_store(
        self,
        store_name: str,
        partition: int,
        config: Config,
        connection: Connection,
        send: ChangelogSend | None,
    ) -> StorePartition:
        """Open partition ``partition`` of store ``store_name`` on ``connection`` (a connection to the task's
        state file, not inside a transaction); ``send`` receives the store's changelog records (None when
        the store has no changelog)."""
        ...


def load_store_factory(config: Config, name: str) -> StoreFactory:
    """An instance of the factory configured for store ``name``.

    A missing, unimportable or unsuitable ``stores.<name>.factory`` is a ConfigError naming that key.
    """
    key = store_key(name, "factory")
    path = config.get_str(key)
    if path is None or not path.strip():
        raise ConfigError(f"missing required config {key}: no factory for store {name!r}", key=key)
    target = import_dotted(path, key)
    try:
        factory: Any = target() if isinstance(target, type) else target
    except Exception as exc:
        raise ConfigError(
            f"{key}={path!r}: creating the factory failed: {type(exc).__name__}: {exc}", key=key
        ) from exc
    if not isinstance(factory, StoreFactory) or not callable(factory.get_store):
        raise ConfigError(f"{key}={path!r} is not a store factory: it has no get_store()", key=key)
    return factory


__all__ = ["StoreFactory", "StorePartition", "load_store_factory"]
