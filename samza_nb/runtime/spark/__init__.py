"""The Spark runner: a job's containers as the tasks of one background Spark job (docs/architecture.md §10).

``samza_nb.runtime.spark.SparkJobRunner(config, spark=None)``; the rest is internal: what it asks of
Spark's scheduler (cluster), where files may live (placement), shipping the job's module (ship) and what
an executor's task runs (task). The runner is imported on first use: an executor's Python worker imports
:mod:`.task` from this package, and must not pay for the driver's side (the coordinator, the container).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.runtime.spark.runner import SparkJobRunner


def __getattr__(name: str) -> Any:
    if name == "SparkJobRunner":
        from samza_nb.runtime.spark.runner import SparkJobRunner

        return SparkJobRunner
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SparkJobRunner"]


def __dir__() -> list[str]:
    """The module's names, ``SparkJobRunner`` (loaded on first use) included (what autodoc lists)."""
    return sorted({*globals(), "SparkJobRunner"})
