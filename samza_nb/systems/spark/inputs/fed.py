"""The seam between a Spark system's bounded streams and its fed (streaming) ones.

The admin and the consumer of a Spark system (:mod:`..factory`) ask :func:`fed_streams` for the system's
:class:`FedStreams` and hand every stream it says is fed (:meth:`FedStreams.is_fed`) to it: metadata,
feeding, and reading (its own consumer, the durable log's). Every other stream is bounded: written once and
read with pyarrow. :func:`fed_streams` gives :class:`.fed_log.LogFedStreams`: a registered streaming
DataFrame fed by ``foreachBatch`` into ``<base>/<job.name>-<job.id>/spark-stream/<system>/log``
(:mod:`.feed`), read with the
durable log's consumer.
Offsets of fed streams must be integers ("0", "1", …) like the bounded ones: the admin orders both alike.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Protocol

from samza_nb.errors import SamzaError
from samza_nb.systems.spark.inputs.fed_log import LogFedStreams

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemConsumer


class FedStreams(Protocol):
    """The fed streams of one Spark system, in any process (driver, container, executor)."""

    def is_fed(self, stream: str) -> bool:
        """True when ``stream`` is fed (the admin and consumer delegate it here); must answer alike in
        every process of the job (the driver has the registration, containers must tell it otherwise)."""
        ...

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """Partition metadata of the fed ``streams`` (integer offsets)."""
        ...

    async def start_feeding(self, streams: Collection[str]) -> None:
        """Start feeding those of ``streams`` that are fed (idempotent); see FeedingSystemAdmin."""
        ...

    async def stop_feeding(self) -> None:
        """Stop every feed started here (idempotent)."""
        ...

    def consumer(self) -> SystemConsumer:
        """A new consumer of fed streams (registered, started, polled and stopped by the Spark consumer)."""
        ...


class NoFedStreams:
    """No stream is fed (the bounded-only Spark system)."""

    def is_fed(self, stream: str) -> bool:
        """Never."""
        return False

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """Nothing is fed: asking is a SamzaError."""
        if streams:
            raise SamzaError(f"Spark streams {sorted(streams)} are not fed")
        return {}

    async def start_feeding(self, streams: Collection[str]) -> None:
        """Nothing to feed."""

    async def stop_feeding(self) -> None:
        """Nothing to stop."""

    def consumer(self) -> SystemConsumer:
        """Nothing is fed: asking is a SamzaError."""
        raise SamzaError("this Spark system has no fed streams to consume")


def fed_streams(system: str, config: Config) -> FedStreams:
    """The fed streams of Spark system ``system`` (one object per admin / consumer)."""
    return LogFedStreams(config, system)


__all__ = ["FedStreams", "NoFedStreams", "fed_streams"]
