"""The Spark runner: a job's containers as the tasks of one background Spark job (docs/architecture.md §10).

``samza_nb.runtime.spark.SparkJobRunner(config, spark=None)``; the rest is internal: what it asks of
Spark's scheduler (cluster), where files may live (placement), shipping the job's module (ship) and what
an executor's task runs (task).
"""

from samza_nb.runtime.spark.runner import SparkJobRunner

__all__ = ["SparkJobRunner"]
