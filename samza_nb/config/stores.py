"""Which stores a job configures and where their changelogs go: the one parser of ``stores.<name>.*``
keys that every layer (storage, systems) reads."""

from __future__ import annotations

from samza_nb.api.streams import SystemStream
from samza_nb.config.config import Config
from samza_nb.config.system_defaults import default_system
from samza_nb.errors import ConfigError


def store_key(store_name: str, suffix: str) -> str:
    """``stores.<store_name>.<suffix>``."""
    return f"stores.{store_name}.{suffix}"


def configured_store_names(config: Config) -> list[str]:
    """The stores configured in ``config`` (every ``stores.<name>.factory``; a name has no dot), sorted."""
    return _names_with(config, "factory")


def store_changelogs(config: Config) -> dict[str, SystemStream]:
    """The changelog of every store that names one (``stores.<name>.changelog``, read as
    :func:`changelog_stream` reads it), by store name; a store's ``factory`` need not be set."""
    found = {store: changelog_stream(config, store) for store in _names_with(config, "changelog")}
    return {store: stream for store, stream in found.items() if stream is not None}


def _names_with(config: Config, suffix: str) -> list[str]:
    """The ``<name>`` of every ``stores.<name>.<suffix>`` key in ``config`` (no dot in a name), sorted."""
    end = "." + suffix
    names = {
        key[len("stores.") : -len(end)] for key in config if key.startswith("stores.") and key.endswith(end)
    }
    return sorted(name for name in names if name and "." not in name)


def changelog_stream(config: Config, store: str) -> SystemStream | None:
    """The changelog of ``store``, or None without one.

    ``stores.<name>.changelog`` is ``system.stream``, or a bare stream on ``job.changelog.system``, else
    ``job.default.system``, else the embedded durable log (system ``log``). Anything else (``.counts``,
    ``kafka.``) is a :class:`ConfigError` naming ``stores.<name>.changelog``.
    """
    return parse_changelog(config, store, _text(config, store_key(store, "changelog")))


def parse_changelog(config: Config, store: str, value: str | None) -> SystemStream | None:
    """``value`` read as the changelog of ``store`` (None for none), as :func:`changelog_stream` reads it."""
    if value is None:
        return None
    key = store_key(store, "changelog")
    system, dot, stream = value.partition(".")
    if dot and system and stream:
        return SystemStream(system, stream)
    if dot:
        raise ConfigError(f"{key}={value!r} is not valid: expected system.stream or a stream name", key=key)
    system = _text(config, "job.changelog.system") or default_system(config)
    return SystemStream(system, value)


def changelog_systems(config: Config) -> set[str]:
    """The systems the configured stores' changelogs are on (``log`` for a changelog that names none when
    no default system is set): a container needs them whether or not they have a
    ``systems.<name>.samza.factory``."""
    streams = (changelog_stream(config, store) for store in configured_store_names(config))
    return {stream.system for stream in streams if stream is not None}


def _text(config: Config, key: str) -> str | None:
    value = config.get_str(key)
    return value.strip() if value is not None and value.strip() else None


__all__ = [
    "changelog_stream",
    "changelog_systems",
    "configured_store_names",
    "parse_changelog",
    "store_changelogs",
    "store_key",
]
