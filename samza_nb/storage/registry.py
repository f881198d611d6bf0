"""Finding a store's factory from config (``stores.<name>.factory``)."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import duckdb

from samza_nb.config import Config
from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError
from samza_nb.storage.base import KeyValueStore
from samza_nb.storage.engine import DuckDBEngine
from samza_nb.storage.logged import ChangelogSend
from samza_nb.storage.settings import store_key


@runtime_checkable
class StoreFactory(Protocol):
    """What ``stores.<name>.factory`` names: builds one partition of a store."""

    def get_store(
        self,
        store_name: str,
        partition: int,
        config: Config,
        connection: duckdb.DuckDBPyConnection,
        send: ChangelogSend | None = None,
    ) -> tuple[KeyValueStore[Any, Any], DuckDBEngine]:
        """``(the layered store, its engine)`` for partition ``partition`` of store ``store_name``."""
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
    if not callable(getattr(factory, "get_store", None)):
        raise ConfigError(f"{key}={path!r} is not a store factory: it has no get_store()", key=key)
    result: StoreFactory = factory
    return result


__all__ = ["StoreFactory", "load_store_factory"]
