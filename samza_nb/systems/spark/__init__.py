"""Spark DataFrames as streams and as a sink (docs/architecture.md §13).

``systems.<s>.samza.factory = samza_nb.systems.spark.SparkSystemFactory``. Inputs are DataFrames registered
from Python (:func:`register_dataframe`) or configured by path (``systems.<s>.streams.<t>.spark.path``);
a bounded one is written once into the job's directory and read with pyarrow by row index, a streaming one is
fed into the durable log by ``foreachBatch``; outputs are parquet files per task per commit, read back with
:func:`read_output`. pyspark is imported only where a SparkSession is needed (on the driver): containers on
executors read the written files with pyarrow alone. The names load on first use: an executor's Python
worker imports this package's settings to start a container, not the system's factory, sink and feeds.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.systems.spark.factory import SparkSystemFactory
    from samza_nb.systems.spark.outputs.sink import read_output
    from samza_nb.systems.spark.registry import register_dataframe, unregister_dataframe

_HOMES = {
    "SparkSystemFactory": "samza_nb.systems.spark.factory",
    "read_output": "samza_nb.systems.spark.outputs.sink",
    "register_dataframe": "samza_nb.systems.spark.registry",
    "unregister_dataframe": "samza_nb.systems.spark.registry",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    """The module's names, those loaded on first use included (what ``dir()`` and Sphinx's autodoc list)."""
    return sorted({*globals(), *_HOMES})


def register_samza_log(spark: object) -> None:
    """Register the ``samza-log`` data source on ``spark`` (:mod:`.datasource`; imports pyspark)."""
    from samza_nb.systems.spark.datasource import register_samza_log as register

    register(spark)


__all__ = [
    "SparkSystemFactory",
    "read_output",
    "register_dataframe",
    "register_samza_log",
    "unregister_dataframe",
]
