"""The immutable job configuration: a read-only mapping of Samza key names to string values."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, overload

from samza_nb.api.config_mapping import ConfigMapping
from samza_nb.config.catalogue import KEYS, job_id, job_name, spec_for
from samza_nb.config.key_spec import parse_bool, parse_int, parse_list
from samza_nb.errors import ConfigError

_MISSING: Any = object()


class Config(ConfigMapping):
    """Read-only ``str -> str`` mapping with typed getters: the API's
    :class:`~samza_nb.api.config_mapping.ConfigMapping`, which a task reads in ``TaskContext.config``.

    Getters of catalogued keys fall back to the catalogue's default and raise :class:`ConfigError` naming
    the key, the bad value and what is allowed.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any] | None = None) -> None:
        items: dict[str, str] = {}
        for key, value in (data or {}).items():
            if not isinstance(key, str) or not key.strip():
                raise ConfigError(f"config keys must be non-empty strings, got {key!r}", key=str(key))
            if value is None:
                raise ConfigError(f"{key} has no value (None)", key=key)
            text = _to_text(value)
            if not (key.isascii() and text.isascii()):
                _check_utf8(key, text)
            items[key.strip()] = text
        self._data = items

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"Config({self._data!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Config):
            return self._data == other._data
        return NotImplemented

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    # -- derived configs -------------------------------------------------------------------------------
    def with_overrides(self, overrides: Mapping[str, Any]) -> Config:
        """A new Config with ``overrides`` applied on top."""
        merged: dict[str, Any] = dict(self._data)
        merged.update(overrides)
        return Config(merged)

    def subset(self, prefix: str, strip_prefix: bool = True) -> Config:
        """The keys under ``prefix`` (optionally with the prefix removed)."""
        return Config(
            {
                (key[len(prefix) :] if strip_prefix else key): value
                for key, value in self._data.items()
                if key.startswith(prefix)
            }
        )

    # -- typed getters ---------------------------------------------------------------------------------
    def _raw(self, key: str, default: str | None) -> str | None:
        if key in self._data:
            return self._data[key]
        if default is not _MISSING:
            return default
        spec = spec_for(key)
        return spec.default if spec is not None else None

    @overload
    def get_str(self, key: str) -> str | None: ...
    @overload
    def get_str(self, key: str, default: str) -> str: ...
    def get_str(self, key: str, default: Any = _MISSING) -> str | None:
        """The value of ``key``, else ``default``, else the catalogue default (or None)."""
        return self._raw(key, default)

    def require(self, key: str, why: str = "") -> str:
        """The value of ``key``; a ConfigError naming the key when it is missing or blank."""
        value = self._raw(key, _MISSING)
        if value is None or not value.strip():
            raise ConfigError(f"missing required config {key}{': ' + why if why else ''}", key=key)
        return value.strip()

    def get_int(self, key: str, default: int | None = None) -> int:
        """``key`` as an int; a ConfigError naming key and value when it is not one."""
        raw = self._raw(key, None if default is None else str(default))
        if raw is None:
            raise ConfigError(f"missing required config {key} (an integer)", key=key)
        spec = spec_for(key)
        if spec is not None and key in self._data:
            value: int = spec.parse(key, raw)
            return value
        return parse_int(key, raw)

    def get_bool(self, key: str, default: bool | None = None) -> bool:
        """``key`` as a bool; a ConfigError naming key and value when it is not one."""
        raw = self._raw(key, None if default is None else str(default).lower())
        if raw is None:
            raise ConfigError(f"missing required config {key} (true or false)", key=key)
        return parse_bool(key, raw)

    def get_list(self, key: str, default: list[str] | None = None) -> list[str]:
        """``key`` as a comma-separated list (blanks dropped)."""
        raw = self._raw(key, None)
        if raw is None:
            return list(default or [])
        return parse_list(raw)

    def job_name(self) -> str:
        """``job.name`` (the catalogue default when unset); it names the job's checkpoints and state."""
        return job_name(self)

    def job_id(self) -> str:
        """``job.id`` (the catalogue default when unset); the job instance beside ``job.name``."""
        return job_id(self)

    def value(self, key: str) -> Any:
        """The typed value of a catalogued key (its default when unset)."""
        spec = spec_for(key)
        if spec is None:
            raise ConfigError(f"{key} is not a known config key", key=key)
        raw = self._data.get(key, spec.default)
        return None if raw is None else spec.parse(key, raw)

    def validate(self) -> Config:
        """Check every catalogued key that is set; raises the first ConfigError found. Returns self."""
        for key, raw in self._data.items():
            spec = spec_for(key)
            if spec is not None:
                spec.parse(key, raw)
        return self


def _check_utf8(key: str, text: str) -> None:
    """A ConfigError unless ``key`` and ``text`` can be written as UTF-8 (a lone surrogate, such as a byte
    that is not UTF-8 on a command line, cannot: the job could not write it to its coordinator stream)."""
    for what, value in (("key", key), ("value", text)):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigError(
                f"config {key!r}: the {what} is not text that UTF-8 can hold ({exc.reason} at character "
                f"{exc.start}: a byte that is not UTF-8 on the command line or in a file name?)",
                key=key,
            ) from None


def _to_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    return str(value)


__all__ = ["KEYS", "Config"]
