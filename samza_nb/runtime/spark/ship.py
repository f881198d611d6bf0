"""Shipping the job's own code to Spark's executors as Spark ships code: the top-level module or package that
defines the task (``task.class``) or the application (``app.class``), zipped as ``spark-submit --py-files``
takes it and added with ``SparkContext.addPyFile``.

Executors on other machines do not see the driver's working directory nor a notebook's task module. Under a
cluster master, when the class lives outside the installed packages (``count_task.py`` or a package
``mypipeline/`` beside the job's properties, a notebook's ``%%samza_task`` module), the runner zips its
top-level module or package (:mod:`.package_zip`: deterministic, without ``__pycache__`` and hidden files;
named by its content, so an edited package is a new file Spark ships again, never a stale one) into
``<job.logged.store.base.dir>/<job.name>-<job.id>/py-files/`` on the driver and adds it; each container
then imports it from its executor's Spark files, after the driver's own paths (which win where they exist,
e.g. in local mode, where nothing is shipped). ``spark.ship.code = false`` ships nothing (the workers have
the package installed, or a packed environment in ``spark.archives`` brings it).

Refused in one line naming the key, before the job starts: a namespace package (no ``__init__.py``; which
of its directories would be the package is not the driver's to guess) and code of more than
:data:`MAX_SHIPPED_BYTES`. samza_nb itself is never shipped: a worker's Python must have it installed with
its dependencies (a worker without it fails the job in one line, see :mod:`.task`).
"""

from __future__ import annotations

import importlib.machinery
import logging
import os
import site
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.errors import ConfigError
from samza_nb.runtime.spark.cluster import is_local_master
from samza_nb.runtime.spark.package_zip import archive_name, package_files, write_archive, zip_bytes
from samza_nb.systems.spark.settings import job_directory, job_key

if TYPE_CHECKING:
    from samza_nb.config import Config

log = logging.getLogger(__name__)

CLASS_KEYS: Final = ("task.class", "app.class")
SHIP_KEY: Final = "spark.ship.code"
MAX_SHIPPED_BYTES: Final = 64 * 1024 * 1024
"""The most file bytes a shipped package may hold: more is data or an environment, not code."""
NEVER_SHIPPED: Final = frozenset({"samza_nb"})
_INSTALLED: Final = ("site-packages", "dist-packages")


@dataclass(frozen=True)
class JobCode:
    """The code to ship: the top-level module file or package directory ``path`` of the class that ``key``
    names (``dotted``)."""

    key: str
    dotted: str
    top_level: str
    path: Path


def installed_directories() -> tuple[Path, ...]:
    """Where this Python's installed packages and standard library live (nothing under them is shipped)."""
    paths = sysconfig.get_paths()
    found = [paths[name] for name in ("purelib", "platlib", "stdlib", "platstdlib") if name in paths]
    found += [*site.getsitepackages(), site.getusersitepackages()]
    return tuple(dict.fromkeys(Path(p).absolute() for p in found if p))


def is_installed(path: Path, installed: Sequence[Path]) -> bool:
    """True when ``path`` is inside a site-packages/dist-packages directory or one of ``installed``."""
    if any(part in _INSTALLED for part in path.parts):
        return True
    return any(path.is_relative_to(directory) for directory in installed)


def job_code(config: Config, search_path: Sequence[str]) -> JobCode | None:
    """The top-level module or package that ``task.class`` (else ``app.class``) lives in, found on
    ``search_path`` outside the installed packages; None when there is nothing to ship (no such key, an
    installed or built-in module, samza_nb). A namespace package there is a ConfigError naming the key."""
    for key in CLASS_KEYS:
        dotted = (config.get_str(key) or "").strip()
        if dotted:
            break
    else:
        return None
    module, _, _ = dotted.rpartition(".")
    top_level = module.partition(".")[0]
    if not top_level or top_level in NEVER_SHIPPED:
        return None
    spec = importlib.machinery.PathFinder.find_spec(top_level, [p for p in search_path if p])
    if spec is None:
        return None
    installed = installed_directories()
    locations = list(spec.submodule_search_locations or [])
    if locations and spec.origin in (None, "namespace"):  # no __init__ (a compiled one is not shipped)
        outside = [p for p in locations if not is_installed(Path(p), installed)]
        if not outside:
            return None
        raise ConfigError(
            f"{key} = {dotted}: {top_level} is a namespace package (no __init__.py in {outside[0]}), which "
            f"cannot be shipped to Spark's executors: add {top_level}/__init__.py, or install it on the "
            f"workers and set {SHIP_KEY} = false",
            key=key,
        )
    if spec.origin is None or not spec.origin.endswith(".py"):  # a built-in or extension module
        return None
    origin = Path(spec.origin).absolute()
    path = origin.parent if locations else origin
    if is_installed(path, installed):
        return None
    return JobCode(key, dotted, top_level, path)


def package_archive(code: JobCode, directory: Path) -> Path:
    """The zip of ``code`` (:mod:`.package_zip`) in ``directory``, named by its content; a ConfigError naming
    the key when it holds more than :data:`MAX_SHIPPED_BYTES`."""
    files = package_files(code.path)
    if files.size > MAX_SHIPPED_BYTES:
        raise ConfigError(
            f"{code.key} = {code.dotted}: {code.path} holds {files.size / 2**20:.0f} MiB of files, more than "
            f"the {MAX_SHIPPED_BYTES // 2**20} MiB samza_nb ships to Spark's executors: move data out of "
            f"it, or install it on the workers (or pack an environment into spark.archives) and set "
            f"{SHIP_KEY} = false",
            key=code.key,
        )
    data = zip_bytes(files)
    return write_archive(directory, archive_name(code.top_level, data), data)


def shipped_code_directory(config: Config) -> Path:
    """Where the driver keeps the archives it ships: ``<job.logged.store.base.dir>/<job.name>-<job.id>/
    py-files`` (Spark's file server reads them from there while the application runs)."""
    return job_directory(config) / job_key(config) / "py-files"


def ship_job_code(context: Any, config: Config, search_path: Sequence[str]) -> Path | None:
    """Under a cluster master (and ``spark.ship.code``, default true), add the zip of the job's code
    (:func:`job_code`) to ``context`` with ``addPyFile``; the archive, or None when there is nothing to ship
    (a local master's workers read the driver's disk). Refusals (see the module) are ConfigErrors naming
    the key; a file Spark refuses is logged, not fatal (the containers then look on the driver's paths)."""
    if is_local_master(str(context.master)) or not config.value(SHIP_KEY):
        return None
    code = job_code(config, search_path)
    if code is None:
        return None
    archive = package_archive(code, shipped_code_directory(config))
    try:
        context.addPyFile(str(archive))
    except Exception as exc:
        log.warning("cannot ship %s to Spark's executors: %s", archive, exc)
        return None
    log.info("shipping %s (%s) to Spark's executors as %s", code.top_level, code.path, archive.name)
    return archive


def spark_files_directory() -> str | None:
    """On an executor: the directory of the files the driver added (``SparkFiles``); None elsewhere."""
    try:
        from pyspark import SparkFiles

        return str(SparkFiles.getRootDirectory())
    except Exception:  # not in a Spark task
        return None


def shipped_paths(path: Sequence[str], current: Sequence[str] = (), root: str | None = None) -> list[str]:
    """On an executor: where a container imports shipped code from, given the worker's ``sys.path``
    (``path``) and the names of the archives this run shipped (``current``): those archives first (a
    reused Python worker also has the archives of earlier runs of the session on its path, in the order
    they were first added, so an edited and then reverted package would otherwise come from the edited
    archive), then the other archives added with ``addPyFile`` that PySpark put on it, then the Spark files
    directory itself (a ``.py`` file added). ``root``: that directory (default: ``SparkFiles``'); ``[]``
    outside a Spark task."""
    root = root if root is not None else spark_files_directory()
    if root is None:
        return []
    root = os.path.abspath(root)  # an executor's may be "." (its working directory, not the container's)
    archives = [os.path.abspath(p) for p in path if p]
    added = [p for p in archives if os.path.dirname(p) == root]
    return list(dict.fromkeys([*(os.path.join(root, name) for name in current), *added, root]))


__all__ = [
    "MAX_SHIPPED_BYTES",
    "SHIP_KEY",
    "JobCode",
    "installed_directories",
    "is_installed",
    "job_code",
    "package_archive",
    "ship_job_code",
    "shipped_code_directory",
    "shipped_paths",
    "spark_files_directory",
]
