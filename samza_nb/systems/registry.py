"""Finding a system's factory from config, and importing plug-ins by dotted path."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemFactory


def import_dotted(path: str, key: str) -> Any:
    """The object at dotted ``path`` (``package.module.Name``); a ConfigError naming ``key`` and the path
    when it cannot be imported."""
    module_name, _, attr = path.strip().rpartition(".")
    if not module_name or not attr:
        raise ConfigError(
            f"{key}={path!r} is not valid: expected a dotted path such as pkg.module.Name", key=key
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{key}={path!r}: cannot import module {module_name!r} ({exc})", key=key) from None
    except Exception as exc:
        raise ConfigError(
            f"{key}={path!r}: importing module {module_name!r} failed: {type(exc).__name__}: {exc}", key=key
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"{key}={path!r}: module {module_name!r} has no {attr!r}", key=key) from None


def system_factory(config: Config, system: str) -> SystemFactory:
    """An instance of the factory configured for ``system`` (``systems.<system>.samza.factory``)."""
    key = f"systems.{system}.samza.factory"
    path = config.get_str(key)
    if not path:
        raise ConfigError(f"missing required config {key}: no factory for system {system!r}", key=key)
    factory_cls = import_dotted(path, key)
    factory = factory_cls() if callable(factory_cls) else factory_cls
    for method in ("get_admin", "get_consumer", "get_producer"):
        if not callable(getattr(factory, method, None)):
            raise ConfigError(f"{key}={path!r} is not a system factory: it has no {method}()", key=key)
    result: SystemFactory = factory
    return result
