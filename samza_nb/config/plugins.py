"""Importing plug-ins (tasks, factories, serdes, choosers) by the dotted path a config key names, and
checking those paths when a config is checked (:func:`check_class_paths`).

A path that cannot be imported is an error naming the key, the path and why, with the path it most likely
meant when there is one (``samza_nb.systems.kafka.KafkaSystemFactor``: did you mean
``samza_nb.systems.kafka.KafkaSystemFactory``?). A suggestion fixes the path one segment at a time: the
first segment that does not resolve is replaced by the closest name (difflib ratio >= :data:`CUTOFF`) among
what the part before it offers: a module's public attributes and exports (``__all__``) and, for a package,
its modules (found on disk, not imported); for the first segment, the top-level modules. A path is suggested
only when it then resolves whole. The check imports the modules a path names but does not touch a lazy
export (a name in a module's ``__all__`` that its ``__getattr__`` loads): checking
``samza_nb.storage.duckdb.DuckDBStoreFactory`` does not load DuckDB.
"""

from __future__ import annotations

import difflib
import importlib
import os
import pkgutil
import sys
from collections.abc import Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any

from samza_nb.config.catalogue import spec_for
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
    suggestion = suggest_path(text) if cause is None else None
    meant = f"; did you mean {suggestion}?" if suggestion else ""
    raise ConfigError(f"{key}={path!r} cannot be imported: {problem}{meant}", key=key) from cause


def check_class_paths(config: Mapping[str, str], search: Sequence[str] = ()) -> None:
    """Nothing when every class path ``config`` sets resolves (see :func:`class_keys`); else the
    :class:`ConfigError` of :func:`import_dotted` for the first that does not, with a suggestion.
    Modules are looked for in the directories of ``search`` and the working directory first (where the
    job will import its task from), then on ``sys.path``; ``sys.path`` is left as it was."""
    added = [d for d in dict.fromkeys([*search, os.getcwd()]) if d not in sys.path]
    sys.path[:0] = added
    try:
        for key, path in class_keys(config):
            check_class_path(key, path)
    finally:
        for directory in added:
            sys.path.remove(directory)


def check_class_path(key: str, path: str) -> None:
    """Nothing when ``path`` resolves (a lazy export counts, unloaded); else :func:`import_dotted`'s
    :class:`ConfigError` naming ``key``, the path, why and the path it most likely meant."""
    if _resolve(path.strip().split("."))[1] != path.strip().count(".") + 1:
        import_dotted(path, key)  # raises, saying why (a lazy export not in __all__ is imported here)


CUTOFF = 0.75
"""Least difflib ratio between a segment and the name suggested for it."""

FOREIGN_PREFIXES = ("org.apache.samza.",)
"""Class names of Java Samza: never imported at config time (the layer that reads the key maps the ones it
knows, e.g. Samza's serde factories, and refuses the others when the job starts)."""


def class_keys(config: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    """(key, path) of every key of ``config`` whose catalogue kind is a class path (``task.class``,
    ``systems.<s>.samza.factory``, ``stores.<n>.factory``, ``serializers.registry.<n>.class``, ...), set
    to a Python path (not blank, not a Java Samza class name)."""
    for key, value in config.items():
        spec = spec_for(key)
        path = value.strip()
        if spec is not None and spec.kind == "class" and path and not path.startswith(FOREIGN_PREFIXES):
            yield key, path


def suggest_path(path: str) -> str | None:
    """The importable dotted path ``path`` most likely meant (see the module), or None."""
    parts = path.strip().split(".")
    if not all(part.isidentifier() for part in parts):
        return None
    for _ in range(len(parts)):
        resolved, found = _resolve(parts)
        if found == len(parts):
            return ".".join(parts) if ".".join(parts) != path.strip() else None
        if found < 0:  # a module raised while importing: no spelling to fix
            return None
        close = difflib.get_close_matches(parts[found], _names_in(resolved, found), n=1, cutoff=CUTOFF)
        if not close:
            return None
        parts[found] = close[0]
    return None


def _resolve(parts: list[str]) -> tuple[Any, int]:
    """The object the longest resolvable prefix of ``parts`` names and its length (-1: importing raised).
    A module's lazy export (in its ``__all__``, not yet loaded) counts as resolved, unloaded."""
    obj: Any = None
    for at, part in enumerate(parts):
        if obj is None or (isinstance(obj, ModuleType) and _is_package(obj) and part not in vars(obj)):
            name = ".".join(parts[: at + 1])
            try:
                obj = importlib.import_module(name)
                continue
            except ModuleNotFoundError as exc:
                if exc.name != name:
                    return None, -1
                if obj is None:
                    return None, 0
            except Exception:
                return None, -1
        if isinstance(obj, ModuleType) and part not in vars(obj) and part in vars(obj).get("__all__", ()):
            return obj, len(parts) if at == len(parts) - 1 else at
        if part.startswith("_") or part not in dir(obj):
            return obj, at
        obj = getattr(obj, part)
    return obj, len(parts)


def _is_package(module: ModuleType) -> bool:
    return module.__spec__ is not None and module.__spec__.submodule_search_locations is not None


def _names_in(obj: Any, depth: int) -> list[str]:
    """The names a path may go on with after ``obj`` (the top-level modules at depth 0)."""
    if depth == 0:
        return sorted({*sys.modules, *(m.name for m in pkgutil.iter_modules())} - {"__main__"})
    names = [name for name in dir(obj) if not name.startswith("_")]
    if isinstance(obj, ModuleType):
        names += list(vars(obj).get("__all__", ()))
    if isinstance(obj, ModuleType) and _is_package(obj):
        locations = obj.__spec__.submodule_search_locations if obj.__spec__ is not None else None
        names += [m.name for m in pkgutil.iter_modules(list(locations or ()))]
    return names


__all__ = [
    "CUTOFF",
    "FOREIGN_PREFIXES",
    "check_class_path",
    "check_class_paths",
    "class_keys",
    "import_dotted",
    "suggest_path",
]
