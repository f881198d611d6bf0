"""Serdes by name: the one place a serde name becomes a serde, for stores and streams alike.

A name is, in this order: a serde registered in config (``serializers.registry.<name>.class``), a built-in
(``string``, ``json``, ``bytes``, ``int``, ``long``, ``double``, ``pickle``; Samza's ``integer``, ``byte`` and
``bytebuffer`` too; any letter case), one of Samza's serde factory class names
(``org.apache.samza.serializers.JsonSerdeFactory``, ...: the built-in with the same bytes), or the dotted
path of a serde class or factory. A registered class is likewise a serde class, a factory with
``get_serde(name, config)``, or a Samza factory class name.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Mapping
from typing import Any, Final

from samza_nb.config import Config
from samza_nb.config.catalogue import spec_for
from samza_nb.config.plugins import FOREIGN_PREFIXES, check_class_path, import_dotted
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

DEFAULT_SERDE: Final = "bytes"
"""The serde of a store's or a stream's keys or values when none is configured."""

BUILTIN_SERDES: Final[Mapping[str, Callable[[], Serde]]] = {
    "string": StringSerde,
    "json": JsonSerde,
    "bytes": BytesSerde,
    "int": IntSerde,
    "long": LongSerde,
    "double": DoubleSerde,
    "pickle": PickleSerde,
}
"""The serdes every registry knows, by name (``pickle``: trusted data only). ``integer``, ``byte`` and
``bytebuffer`` are accepted as Samza's aliases."""

_SERDE_KEY_ENDS: Final = (".key.serde", ".msg.serde")
"""How the keys that name a serde end."""

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


def builtin_name(name: str) -> str | None:
    """The built-in serde ``name`` stands for (``"JSON"``, ``"integer"``, a Samza factory class name), or
    None when it names none."""
    text = name.strip()
    found = _SAMZA_FACTORIES.get(text)
    if found is not None:
        return found
    lowered = text.lower()
    lowered = _ALIASES.get(lowered, lowered)
    return lowered if lowered in BUILTIN_SERDES else None


class SerdeRegistry:
    """Serdes by name (see the module for what a name may be).

    :meth:`get` returns the serde a name stands for, created on first use and then shared (serdes are
    stateless). Failures raise :class:`ConfigError`: an unknown name names the key that used it, a bad
    registered class names its ``serializers.registry.<name>.class``.
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
        """Every short name :meth:`get` resolves (built-ins and configured ones), sorted."""
        return sorted({*BUILTIN_SERDES, *self._paths})

    def register(self, name: str, serde: Serde) -> None:
        """Register ``serde`` as ``name`` in this registry (overrides config and built-ins)."""
        _check_serde(serde, f"serde {name!r}", class_key(name))
        with self._lock:
            self._serdes[name] = serde

    def get(self, name: str, *, key: str | None = None) -> Serde:
        """The serde ``name`` stands for.

        ``key`` is the config key that named it (e.g. ``stores.counts.key.serde``); an unknown name, or a
        dotted path that is no serde, is a :class:`ConfigError` naming that key.
        """
        with self._lock:
            found = self._serdes.get(name)
            if found is None:
                found = self._create(name, key)
                self._serdes[name] = found
            return found

    def _create(self, name: str, key: str | None) -> Serde:
        text = name.strip()
        path = self._paths.get(text)
        if path is not None:
            return self._load(text, path, class_key(text))
        builtin = builtin_name(text)
        if builtin is not None:
            return BUILTIN_SERDES[builtin]()
        where = key or class_key(text)
        if "." in text:  # a serde class (or factory) named by its dotted path
            return self._load(text, text, where)
        raise self.unknown(where, name)

    def unknown(self, key: str, name: str) -> ConfigError:
        """The error of serde ``name`` (given by ``key``) that no serde has: the closest known name, the
        known names, and how to register one."""
        text = name.strip()
        close = difflib.get_close_matches(text.lower(), [*self.names(), *_ALIASES], n=1, cutoff=0.6)
        meant = f"did you mean {close[0]}? " if close else ""
        known = ", ".join(self.names())
        return ConfigError(
            f"{key}={name!r} is not a serde: no serde has that name; {meant}(known: {known}). "
            f"Register one with {class_key(text)} = package.module.SerdeClass, or give the dotted path "
            "of a class with to_bytes/from_bytes",
            key=key,
        )

    def check_names(self) -> None:
        """Nothing when every serde name the config gives (``stores.<n>.key.serde``, ``...msg.serde``,
        ``systems.<s>[.streams.<t>].samza.{key,msg}.serde``) is a registered, built-in or Samza name or a
        dotted path that resolves; else a :class:`ConfigError` naming the first key, its value and the
        name it most likely meant. Nothing is created or loaded (a lazy export stays unloaded)."""
        for key, value in self._config.items():
            if not key.endswith(_SERDE_KEY_ENDS) or (spec := spec_for(key)) is None or spec.kind != "str":
                continue
            text = value.strip()
            if not text or text in self._paths or builtin_name(text) is not None:
                continue
            if "." not in text:
                raise self.unknown(key, value)
            if not text.startswith(FOREIGN_PREFIXES):
                check_class_path(key, text)

    def _load(self, name: str, path: str, key: str) -> Serde:
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
        _check_serde(made, f"{key}={path!r}", key)
        serde: Serde = made
        return serde


def check_serde_names(config: Config) -> None:
    """:meth:`SerdeRegistry.check_names` of ``config``'s registry: every serde name it gives is one."""
    SerdeRegistry(config).check_names()


def serde_for(name: str, key: str) -> Serde:
    """The serde ``name`` stands for without any registered serdes (a built-in, a Samza factory class name
    or a dotted path); a :class:`ConfigError` naming ``key`` when there is none."""
    return SerdeRegistry().get(name, key=key)


def _check_serde(obj: object, what: str, key: str) -> None:
    if not isinstance(obj, Serde):
        raise ConfigError(
            f"{what} is not a serde: {obj!r} has no to_bytes/from_bytes (nor get_serde(name, config))",
            key=key,
        )


__all__ = [
    "BUILTIN_SERDES",
    "DEFAULT_SERDE",
    "REGISTRY_PREFIX",
    "SerdeRegistry",
    "builtin_name",
    "check_serde_names",
    "class_key",
    "serde_for",
]
