"""A Spark system's outputs: the parquet sink, its commits (each stream's ``_spark_metadata`` log, per
generation) and its column types. Users read outputs with :func:`samza_nb.systems.spark.read_output`, or
point any reader at :func:`current_output_directory` (Spark reads its log; :func:`committed_paths` lists
the committed files for DuckDB or pandas); :func:`output_generations` lists a job's generations."""

from samza_nb.systems.spark.outputs.generations import (
    OutputGeneration,
    current_output_directory,
    output_generations,
)
from samza_nb.systems.spark.outputs.spark_log import committed_paths

__all__ = ["OutputGeneration", "committed_paths", "current_output_directory", "output_generations"]
