"""Serdes by name: the built-ins plus user serdes configured as ``serializers.registry.<name>.class``."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from samza_nb.config import Config
from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError
from samza_nb.serde.base import Serde, SerdeFactory
from samza_nb.serde.builtin import (
    BytesSerde,
    DoubleSerde,
    IntSerde,
    JsonSerde,
    LongSerde,
    PickleSerde,
    StringSerde,
)

REGISTRY_PREFIX: Final = "serializers.registry."

BUILTIN_SERDES: Final[Mapping[str, Callable[[], Serde]]] = {
    "string": StringSerde,
    "json": JsonSerde,
    "bytes": BytesSerde,
    "int": IntSerde,
    "long": LongSerde,
    "double": DoubleSerde,
    "pickle": PickleSerde,
}
"""The serdes every registry knows, by name (``pickle``: trusted data only). ``integer`` and ``byte`` are
accepted as Samza's aliases."""

_ALIASES: Final[Mapping[str, str]] = {"integer": "int", "byte": "bytes", "bytebuffer": "bytes"}

_SAMZA_FACTORIES: Final[Mapping[str, str]] = {
    "org.apache.samza.serializers.StringSerdeFactory": "string",
    "org.apache.samza.serializers.JsonSerdeFactory": "json",
    "org.apache.samza.serializers.JsonSerdeV2Factory": "json",
    "org.apache.samza.serializers.ByteSerdeFactory": "bytes",
    "org.apache.samza.serializers.ByteBufferSerdeFactory": "bytes",
    "org.apache.samza.serializers.IntegerSerdeFactory": "int",
    "org.apache.samza.serializers.LongSerdeFactory": "long",
    "org.apache.samza.serializers.DoubleSerdeFactory": "double",
}
"""Samza's own serde factory class names, mapped to the built-in with the same byte layout, so that job
configs written for Samza keep working."""


def class_key(name: str) -> str:
    """The config key that registers serde ``name``: ``serializers.registry.<name>.class``."""
    return f"{REGISTRY_PREFIX}{name}.class"


class SerdeRegistry:
    """Serdes by name.

    :meth:`get` returns the serde registered under a name: a user serde from config (which may override a
    built-in name) or a built-in. User serde classes are imported and instantiated on first use, once per
    registry; failures raise :class:`ConfigError` naming ``serializers.registry.<name>.class``.
    """

    def __init__(self, config: Config | None = None) -> None:
        self._config = config if config is not None else Config()
        self._paths: dict[str, str] = {}
        for key, value in self._config.items():
            if key.startswith(REGISTRY_PREFIX) and key.endswith(".class"):
                name = key[len(REGISTRY_PREFIX) : -len(".class")]
                if name:
                    self._paths[name] = value.strip()
        self._serdes: dict[str, Serde] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Config) -> SerdeRegistry:
        """A registry of the built-ins and the serdes configured in ``config``."""
        return cls(config)

    def names(self) -> list[str]:
        """Every name :meth:`get` resolves (built-ins and configured ones), sorted."""
        return sorted({*BUILTIN_SERDES, *self._paths})

    def register(self, name: str, serde: Serde) -> None:
        """Register ``serde`` as ``name`` in this registry (overrides config and built-ins)."""
        _check_serde(serde, name, key=None)
        with self._lock:
            self._serdes[name] = serde

    def get(self, name: str, *, key: str | None = None) -> Serde:
        """The serde named ``name``.

        ``key`` is the config key that named it (e.g. ``stores.counts.key.serde``); an unknown name is a
        :class:`ConfigError` naming that key and listing the known names.
        """
        with self._lock:
            found = self._serdes.get(name)
            if found is None:
                found = self._create(name, key)
                self._serdes[name] = found
            return found

    def _create(self, name: str, key: str | None) -> Serde:
        path = self._paths.get(name)
        if path is not None:
            return self._load(name, path)
        builtin = BUILTIN_SERDES.get(_ALIASES.get(name, name))
        if builtin is not None:
            return builtin()
        where = f"{key}={name!r}" if key else f"serde {name!r}"
        raise ConfigError(
            f"{where}: unknown serde; known serdes are {', '.join(self.names())}. Register your own with "
            f"{class_key(name)} = package.module.SerdeClass",
            key=key or class_key(name),
        )

    def _load(self, name: str, path: str) -> Serde:
        key = class_key(name)
        builtin = _SAMZA_FACTORIES.get(path)
        if builtin is not None:
            return BUILTIN_SERDES[builtin]()
        target = import_dotted(path, key)
        try:
            made: Any = target() if callable(target) else target
            if isinstance(made, SerdeFactory) and not isinstance(made, Serde):
                made = made.get_serde(name, self._config)
        except Exception as exc:
            raise ConfigError(
                f"{key}={path!r}: creating the serde failed: {type(exc).__name__}: {exc}", key=key
            ) from exc
        _check_serde(made, name, key=key, path=path)
        serde: Serde = made
        return serde


def _check_serde(obj: object, name: str, *, key: str | None, path: str | None = None) -> None:
    if not isinstance(obj, Serde):
        what = f"{key}={path!r}" if key else f"serde {name!r}"
        raise ConfigError(
            f"{what} is not a serde: {obj!r} has no to_bytes/from_bytes (nor get_serde(name, config))",
            key=key or class_key(name),
        )


__all__ = ["BUILTIN_SERDES", "REGISTRY_PREFIX", "SerdeRegistry", "class_key"]
