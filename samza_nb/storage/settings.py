"""A store's configuration (``stores.<name>.*``), read and checked once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from samza_nb.api.streams import SystemStream
from samza_nb.config import Config
from samza_nb.config.stores import changelog_stream, configured_store_names, parse_changelog, store_key
from samza_nb.errors import ConfigError
from samza_nb.serde.base import Serde
from samza_nb.serde.builtin import BytesSerde
from samza_nb.serde.registry import DEFAULT_SERDE, SerdeRegistry

DEFAULT_WRITE_BATCH_SIZE: Final = 100_000
DEFAULT_OBJECT_CACHE_SIZE: Final = 1000
DEFAULT_PRELOAD_MAX_ROWS: Final = 1_000_000


@dataclass(frozen=True)
class StoreSettings:
    """The settings of store ``name``.

    ``key_serde``/``msg_serde`` default to ``bytes`` when unset (keys and values must then be ``bytes``;
    any other object is refused with an error naming the unset key). ``object_cache_size`` 0 turns the
    cache off. ``thread_safe`` (``stores.<name>.thread.safe``, default true when
    ``job.container.thread.pool.size`` > 0) puts one lock around every store call.
    ``preload_max_rows`` (``stores.<name>.preload.max.rows``): a partition with at most this many rows is
    mirrored in memory at open (0 = never).
    """

    name: str
    factory: str | None
    key_serde: str
    msg_serde: str
    key_serde_set: bool
    msg_serde_set: bool
    changelog: str | None
    write_batch_size: int
    object_cache_size: int
    preload_max_rows: int
    thread_safe: bool

    @classmethod
    def from_config(cls, config: Config, name: str) -> StoreSettings:
        """The settings of store ``name``; a ConfigError naming the first bad key."""
        if not name or not isinstance(name, str):
            raise ConfigError(f"a store name must be a non-empty string, got {name!r}")
        batch_key = store_key(name, "write.batch.size")
        cache_key = store_key(name, "object.cache.size")
        batch = _int(config, batch_key, DEFAULT_WRITE_BATCH_SIZE, minimum=1)
        cache = _int(config, cache_key, DEFAULT_OBJECT_CACHE_SIZE, minimum=0)
        key_serde = _text(config, store_key(name, "key.serde"))
        msg_serde = _text(config, store_key(name, "msg.serde"))
        pool = _int(config, "job.container.thread.pool.size", 0, minimum=0)
        return cls(
            name=name,
            factory=_text(config, store_key(name, "factory")),
            key_serde=key_serde or DEFAULT_SERDE,
            msg_serde=msg_serde or DEFAULT_SERDE,
            key_serde_set=key_serde is not None,
            msg_serde_set=msg_serde is not None,
            changelog=_text(config, store_key(name, "changelog")),
            write_batch_size=batch,
            object_cache_size=cache,
            preload_max_rows=_int(
                config, store_key(name, "preload.max.rows"), DEFAULT_PRELOAD_MAX_ROWS, minimum=0
            ),
            thread_safe=config.get_bool(store_key(name, "thread.safe"), pool > 0),
        )

    def serdes(self, registry: SerdeRegistry) -> tuple[Serde, Serde]:
        """The key and msg serdes, from ``registry``; ConfigError naming the key of an unknown name."""
        return (
            self._serde(registry, "key.serde", self.key_serde, self.key_serde_set),
            self._serde(registry, "msg.serde", self.msg_serde, self.msg_serde_set),
        )

    def _serde(self, registry: SerdeRegistry, suffix: str, name: str, is_set: bool) -> Serde:
        key = store_key(self.name, suffix)
        if not is_set:
            return BytesSerde(unset_key=key)
        return registry.get(name, key=key)

    def changelog_stream(self, config: Config) -> SystemStream | None:
        """The changelog stream, or None without one (see :func:`changelog_stream`)."""
        return parse_changelog(config, self.name, self.changelog)


def _text(config: Config, key: str) -> str | None:
    value = config.get_str(key)
    return value.strip() if value is not None and value.strip() else None


def _int(config: Config, key: str, default: int, *, minimum: int) -> int:
    value = config.get_int(key, default)
    if value < minimum:
        raise ConfigError(f"{key}={value} is not valid: expected an integer >= {minimum}", key=key)
    return value


__all__ = [
    "DEFAULT_OBJECT_CACHE_SIZE",
    "DEFAULT_PRELOAD_MAX_ROWS",
    "DEFAULT_SERDE",
    "DEFAULT_WRITE_BATCH_SIZE",
    "StoreSettings",
    "changelog_stream",
    "configured_store_names",
    "store_key",
]
