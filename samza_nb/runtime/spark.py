"""SparkJobRunner: a job's containers as the tasks of one background Spark job (DESIGN §10.4; being built:
issue 14)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.config import Config


class SparkJobRunner:
    """The job coordinator on the driver; ``job.container.count`` containers as the tasks of one Spark job.

    ``run(timeout=None)`` blocks until the job is done, stopped or failed; ``start()`` submits it and
    returns; ``stop()`` stops cooperatively (every container commits, then the job group is cancelled);
    ``processed`` counts every container's messages."""

    def __init__(self, config: Config, spark: Any = None) -> None:
        self.config = config
        self.spark = spark

    def start(self) -> None:
        """Start the coordinator and submit the containers' Spark job; returns at once."""
        raise NotImplementedError

    def run(self, timeout: float | None = None) -> None:
        """Run to the end (see the class)."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop cooperatively; safe from any thread."""
        raise NotImplementedError

    @property
    def processed(self) -> int:
        """Messages processed by every container, as last reported to the coordinator."""
        return 0


__all__ = ["SparkJobRunner"]
