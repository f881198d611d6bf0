"""Finding a system's factory from config."""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.config.plugins import import_dotted
from samza_nb.config.system_defaults import DEFAULT_LOG_SYSTEM, default_system, log_directory
from samza_nb.errors import ConfigError
from samza_nb.systems.base import SystemFactory

if TYPE_CHECKING:
    from samza_nb.config import Config


def system_factory(config: Config, system: str) -> SystemFactory:
    """An instance of the factory configured for ``system`` (``systems.<system>.samza.factory``); the
    system named :data:`DEFAULT_LOG_SYSTEM` (``log``) is the embedded durable log when none is."""
    key = f"systems.{system}.samza.factory"
    path = (config.get_str(key) or "").strip()
    if not path and system == DEFAULT_LOG_SYSTEM:
        from samza_nb.systems.log import LogSystemFactory

        return LogSystemFactory()
    if not path:
        raise ConfigError(f"missing required config {key}: no factory for system {system!r}", key=key)
    factory_cls = import_dotted(path, key)
    factory = factory_cls() if callable(factory_cls) else factory_cls
    if not isinstance(factory, SystemFactory):
        missing = [m for m in ("get_admin", "get_consumer", "get_producer") if not hasattr(factory, m)]
        raise ConfigError(
            f"{key}={path!r} is not a system factory: it has no {', '.join(f'{m}()' for m in missing)}",
            key=key,
        )
    return factory


__all__ = ["DEFAULT_LOG_SYSTEM", "default_system", "log_directory", "system_factory"]
