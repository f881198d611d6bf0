"""Which stores a job configures and where their changelogs go: the one parser of ``stores.<name>.*``
keys that every layer (storage, systems) reads."""

from __future__ import annotations

from samza_nb.api.streams import SystemStream
from samza_nb.config.config import Config
from samza_nb.errors import ConfigError


def store_key(store_name: str, suffix: str) -> str:
    """``stores.<store_name>.<suffix>``."""
    return f"stores.{store_name}.{suffix}"


def configured_store_names(config: Config) -> list[str]:
    """The stores configured in ``config`` (every ``stores.<name>.factory``; a name has no dot), sorted."""
    names = {
        key[len("stores.") : -len(".factory")]
        for key in config
        if key.startswith("stores.") and key.endswith(".factory")
    }
    return sorted(name for name in names if name and "." not in name)


def changelog_stream(config: Config, store: str) -> SystemStream | None:
    """The changelog of ``store``, or None without one.

    ``stores.<name>.changelog`` is ``system.stream``, or a bare stream on ``job.changelog.system`` (else
    ``job.default.system``). Anything else (``.counts``, ``kafka.``, a bare stream with neither system key
    set) is a :class:`ConfigError` naming ``stores.<name>.changelog``.
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
    system = _text(config, "job.changelog.system") or _text(config, "job.default.system") or ""
    if not system:
        raise ConfigError(
            f"{key}={value!r} names no system, and neither job.changelog.system nor job.default.system "
            "is set: write it as system.stream",
            key=key,
        )
    return SystemStream(system, value)


def _text(config: Config, key: str) -> str | None:
    value = config.get_str(key)
    return value.strip() if value is not None and value.strip() else None


__all__ = ["changelog_stream", "configured_store_names", "parse_changelog", "store_key"]
