"""Importing plug-ins (tasks, factories, serdes, choosers) by the dotted path a config key names."""

from __future__ import annotations

import importlib
from typing import Any

from samza_nb.errors import ConfigError


def import_dotted(path: str, key: str) -> Any:
    """The object at ``path`` (``package.module.Name``, or a nested ``package.module.Outer.Inner``).

    Raises :class:`ConfigError` with ``key`` set, naming the key and the path and saying why: the path is
    not dotted, no module of it exists, the module has no such attribute, or importing the module raised.
    """
    text = path.strip()
    parts = text.split(".")
    if len(parts) < 2 or not all(part.isidentifier() for part in parts):
        raise ConfigError(
            f"{key}={path!r} is not valid: expected a dotted path such as package.module.Name", key=key
        )
    problem: str | None = None
    cause: BaseException | None = None
    # The longest importable prefix is the module; the rest are attributes (a nested class is allowed).
    for split in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:split])
        try:
            obj: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is None or not (module_name == exc.name or module_name.startswith(exc.name + ".")):
                # The module exists, but something it imports does not: that is the real problem.
                problem = problem or f"importing module {module_name!r} raised {type(exc).__name__}: {exc}"
                cause = exc
                break
            problem = problem or f"module {exc.name!r} not found"
            continue  # maybe an attribute of a shorter module prefix
        except Exception as exc:
            problem = problem or f"importing module {module_name!r} raised {type(exc).__name__}: {exc}"
            cause = exc
            break
        attributes = ".".join(parts[split:])
        found = 0
        try:
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
                found += 1
        except AttributeError:
            # Past the first attribute the path surely named a nested attribute, not a missing module.
            attribute_problem = f"module {module_name!r} has no attribute {attributes!r}"
            problem = attribute_problem if found > 0 or problem is None else problem
            break
        return obj
    raise ConfigError(f"{key}={path!r} cannot be imported: {problem}", key=key) from cause


__all__ = ["import_dotted"]
