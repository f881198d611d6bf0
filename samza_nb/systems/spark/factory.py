"""SparkSystemFactory: the admin, consumer and producer of a Spark system (being built: issue 14)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.config import Config


class SparkSystemFactory:
    """Builds a Spark system's parts (``systems.<s>.samza.factory``)."""

    def get_admin(self, system_name: str, config: Config) -> Any:
        """The admin (metadata from the written inputs; writes them once on the driver)."""
        raise NotImplementedError

    def get_consumer(self, system_name: str, config: Config) -> Any:
        """The consumer (pyarrow over the written files; the durable log for fed streams)."""
        raise NotImplementedError

    def get_producer(self, system_name: str, config: Config) -> Any:
        """The producer (parquet per task per commit)."""
        raise NotImplementedError


__all__ = ["SparkSystemFactory"]
