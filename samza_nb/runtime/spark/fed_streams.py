"""The streaming DataFrames the driver feeds a Spark job's containers from (registered in this process on a
Spark system of the job), and the first of them whose feed failed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.systems.spark.inputs.feed import feed_failure
from samza_nb.systems.spark.registry import registered_frames

if TYPE_CHECKING:
    from samza_nb.config import Config

SPARK_FACTORY = "samza_nb.systems.spark.SparkSystemFactory"
"""``systems.<s>.samza.factory`` of a Spark system."""


def fed_streams(config: Config) -> list[tuple[str, str]]:
    """(system, stream) of every streaming DataFrame registered in this process on a Spark system of
    ``config`` (the driver feeds each while the job runs)."""
    spark_systems = {
        key.removeprefix("systems.").removesuffix(".samza.factory")
        for key, value in config.items()
        if key.startswith("systems.") and key.endswith(".samza.factory") and value.strip() == SPARK_FACTORY
    }
    return sorted(
        (frame.system, frame.stream)
        for frame in registered_frames()
        if frame.system in spark_systems and frame.streaming
    )


def failed_feed(fed: list[tuple[str, str]]) -> str | None:
    """One line on the first of the ``fed`` streams whose feed failed on this driver, if any."""
    for system, stream in fed:
        why = feed_failure(system, stream)
        if why is not None:
            return f"the feed of stream {system}.{stream} failed: {why}"
    return None


__all__ = ["SPARK_FACTORY", "failed_feed", "fed_streams"]
