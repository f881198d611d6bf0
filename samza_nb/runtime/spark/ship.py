"""Shipping the job's own module to Spark's executors: the module a notebook cell or a script next to the
config defines the task (``task.class``) or the application (``app.class``) in.

Executors on other machines do not see the driver's working directory nor a notebook's task module. Under a
cluster master, when the class lives in a top-level module file outside the installed packages
(``count_task.py`` beside the job's properties, a notebook's ``%%samza_task`` module), the runner adds that
file with ``SparkContext.addPyFile``; each container then finds it in the Spark files directory of its
executor, after the driver's own paths (which win where they exist, e.g. in local mode). A class in a package
is not shipped: install the package on the workers, or keep it on a path they share.
"""

from __future__ import annotations

import importlib.machinery
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.runtime.spark.cluster import is_local_master

if TYPE_CHECKING:
    from samza_nb.config import Config

log = logging.getLogger(__name__)

CLASS_KEYS: Final = ("task.class", "app.class")
_INSTALLED: Final = ("site-packages", "dist-packages")


def job_module_file(config: Config, search_path: Sequence[str]) -> Path | None:
    """The file of the top-level module ``task.class`` (else ``app.class``) names, when it is a single
    ``.py`` file found on ``search_path`` outside the installed packages; None otherwise."""
    for key in CLASS_KEYS:
        dotted = (config.get_str(key) or "").strip()
        if dotted:
            break
    else:
        return None
    module, _, _ = dotted.rpartition(".")
    if not module or "." in module:  # no module, or a module inside a package
        return None
    spec = importlib.machinery.PathFinder.find_spec(module, [p for p in search_path if p])
    origin = spec.origin if spec is not None else None
    if origin is None or not origin.endswith(".py") or spec is None or spec.submodule_search_locations:
        return None
    path = Path(origin)
    if any(part in _INSTALLED for part in path.parts):
        return None
    return path


def ship_job_module(context: Any, config: Config, search_path: Sequence[str]) -> Path | None:
    """Under a cluster master, add the job's module file (:func:`job_module_file`) to ``context`` with
    ``addPyFile``; the file, or None when there is nothing to ship (a local master's workers read the
    driver's disk). A file Spark refuses (another file of that name was added in this session) is
    logged, not fatal: the containers then look for the module on the driver's paths."""
    if is_local_master(str(context.master)):
        return None
    path = job_module_file(config, search_path)
    if path is None:
        return None
    try:
        context.addPyFile(str(path))
    except Exception as exc:
        log.warning("cannot ship %s to Spark's executors: %s", path, exc)
        return None
    log.info("shipping %s to Spark's executors", path)
    return path


def spark_files_directory() -> str | None:
    """On an executor: the directory of the files the driver added (``SparkFiles``); None elsewhere."""
    try:
        from pyspark import SparkFiles

        return str(SparkFiles.getRootDirectory())
    except Exception:  # not in a Spark task
        return None


__all__ = ["job_module_file", "ship_job_module", "spark_files_directory"]
