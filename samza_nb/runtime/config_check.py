"""The one check of a job's config that every entry point runs before a job starts: ``samza-nb run``,
:class:`~samza_nb.runtime.LocalJobRunner`, :class:`~samza_nb.runtime.spark.runner.SparkJobRunner`,
:class:`~samza_nb.testing.TestRunner` and the notebook's config cells.

It refuses, in one line naming the key, the value and what it most likely meant:

- a key that is a near miss of a known one (``stores.totals.changelg``: did you mean
  ``stores.totals.changelog``?), :func:`~samza_nb.config.check_key_spelling`;
- a class path that does not resolve (``systems.x.samza.factory``, ``stores.<n>.factory``,
  ``task.class``, ``task.chooser.class``, ``serializers.registry.<n>.class``, ...),
  :func:`~samza_nb.config.plugins.check_class_paths` (it imports the modules named, never a lazy
  export such as DuckDB's store factory);
- a serde name that no serde has (``stores.s.key.serde = strng``: did you mean ``string``?),
  :func:`~samza_nb.serde.registry.check_serde_names`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from samza_nb.config import Config
from samza_nb.config.key_check import check_key_spelling
from samza_nb.config.plugins import check_class_paths
from samza_nb.serde.registry import check_serde_names


def check_job_config(
    config: Mapping[str, str], *, whole: bool = True, python_path: Sequence[str] = ()
) -> None:
    """Nothing when ``config`` passes every check of the module; else the first :class:`ConfigError`
    (``key`` set). ``whole``: ``config`` is a whole job's config (``False`` for keys that will join
    others: system names and serde names are then not checked, since only a whole config can tell).
    ``python_path``: directories the job's processes import from besides ``sys.path`` and the working
    directory (a notebook's task module)."""
    check_key_spelling(config, systems=whole)
    check_class_paths(config, python_path)
    if whole:
        check_serde_names(config if isinstance(config, Config) else Config(config))


__all__ = ["check_job_config"]
