"""SparkSystemFactory: the admin, consumer and producer of a Spark system (docs/architecture.md §13).

``systems.<s>.samza.factory = samza_nb.systems.spark.SparkSystemFactory``. A stream is bounded (a
DataFrame written once into the job's directory, read with pyarrow by row index; see
:mod:`.inputs.materialize` and :mod:`.inputs.reader`) or fed (a streaming DataFrame fed into the durable
log). Fed streams are another part's business: the admin and the consumer ask :func:`.inputs.fed.fed_streams`
which streams are fed and delegate those to it (metadata, ``start_feeding`` / ``stop_feeding``, reading) —
that is the whole seam. Outputs are parquet files per task per commit (:mod:`.outputs.sink`). Offsets of both
kinds are integers "0", "1", ….
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from samza_nb.systems.offsets import compare_integer_offsets, integer_offset_after
from samza_nb.systems.spark.inputs.fed import FedStreams, fed_streams
from samza_nb.systems.spark.inputs.manifest import Manifest
from samza_nb.systems.spark.inputs.materialize import prepare_input
from samza_nb.systems.spark.inputs.reader import SPARK_OFFSET, BoundedConsumer
from samza_nb.systems.spark.outputs.sink import SparkSinkProducer
from samza_nb.systems.spark.settings import output_directory

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.config import Config
    from samza_nb.systems.base import SystemConsumer


class SparkSystemAdmin:
    """Admin of a Spark system (a :class:`~samza_nb.systems.base.FeedingSystemAdmin`): metadata of a
    bounded stream from its manifest, which the first call on the driver writes (a later call checks the
    fingerprint); fed streams and feeding are delegated to :class:`.inputs.fed.FedStreams`. Integer offset
    order."""

    def __init__(self, system: str, config: Config, fed: FedStreams | None = None) -> None:
        self.system = system
        self.config = config
        self.fed = fed if fed is not None else fed_streams(system, config)
        self._manifests: dict[str, Manifest] = {}

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """oldest "0", newest str(n-1), upcoming str(n) per partition of n rows (empty: None, None, "0").
        A bounded stream is written first when this process can (see
        :func:`.inputs.materialize.prepare_input`: its SamzaErrors name the stream)."""
        fed = [stream for stream in streams if self.fed.is_fed(stream)]
        result = await self.fed.get_metadata(fed) if fed else {}
        for stream in streams:
            if stream not in result:
                result[stream] = (await self.manifest(stream)).metadata()
        return result

    async def manifest(self, stream: str) -> Manifest:
        """The manifest of bounded ``stream`` (written on first use where possible; then cached)."""
        manifest = self._manifests.get(stream)
        if manifest is None:
            manifest = await asyncio.to_thread(prepare_input, self.config, self.system, stream)
            self._manifests[stream] = manifest
        return manifest

    def offset_comparator(self, a: str, b: str) -> int:
        """Integer order of row indexes ("2" < "10"); end-of-stream sorts last."""
        return compare_integer_offsets(a, b)

    def offset_after(self, offset: str) -> str:
        """The next row index."""
        return integer_offset_after(f"system {self.system!r}", offset, SPARK_OFFSET)

    async def create_stream(self, stream: str, partitions: int) -> None:
        """An output stream is a directory of parquet files: create it (partitions do not apply)."""
        directory = output_directory(self.config, self.system, stream)
        await asyncio.to_thread(directory.mkdir, parents=True, exist_ok=True)

    async def start_feeding(self, streams: Collection[str]) -> None:
        """Start the feeds of the fed ones of ``streams`` (delegated; bounded streams need none)."""
        await self.fed.start_feeding([stream for stream in streams if self.fed.is_fed(stream)])

    async def stop_feeding(self) -> None:
        """Stop the feeds this admin started (delegated)."""
        await self.fed.stop_feeding()


class SparkSystemConsumer:
    """Reads a Spark system's partitions: bounded ones with :class:`.inputs.reader.BoundedConsumer`, fed ones
    with the consumer :meth:`.inputs.fed.FedStreams.consumer` gives (made on the first fed registration)."""

    def __init__(self, system: str, config: Config, fed: FedStreams | None = None) -> None:
        self.system = system
        self.config = config
        self.fed = fed if fed is not None else fed_streams(system, config)
        self.bounded = BoundedConsumer(system, config)
        self._fed_consumer: SystemConsumer | None = None
        self._fed_ssps: set[SystemStreamPartition] = set()

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from row index (or fed offset) ``offset``."""
        if self.fed.is_fed(ssp.stream):
            if self._fed_consumer is None:
                self._fed_consumer = self.fed.consumer()
            self._fed_consumer.register(ssp, offset)
            self._fed_ssps.add(ssp)
        else:
            self.bounded.register(ssp, offset)

    async def start(self) -> None:
        """Start both parts."""
        await self.bounded.start()
        if self._fed_consumer is not None:
            await self._fed_consumer.start()

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """Bounded rows at once (never waiting), then the fed consumer's messages (waiting up to
        ``timeout`` only when no bounded row came); with only ended bounded partitions, waits ``timeout``."""
        fed_ssps = self._fed_ssps
        if not fed_ssps:
            return await self.bounded.poll(ssps, timeout)
        bounded = [ssp for ssp in ssps if ssp not in fed_ssps]
        fed = [ssp for ssp in ssps if ssp in fed_ssps]
        result = dict(await self.bounded.poll(bounded, 0)) if bounded else {}
        if fed and self._fed_consumer is not None:
            result.update(await self._fed_consumer.poll(fed, 0 if result else timeout))
        elif not result and timeout > 0:
            await asyncio.sleep(timeout)
        return result

    async def stop(self) -> None:
        """Stop both parts."""
        try:
            if self._fed_consumer is not None:
                await self._fed_consumer.stop()
        finally:
            await self.bounded.stop()


class SparkSystemFactory:
    """Builds a Spark system's parts (``systems.<s>.samza.factory``)."""

    def get_admin(self, system_name: str, config: Config) -> SparkSystemAdmin:
        """The admin (metadata from the written inputs, which it writes once on the driver; feeding)."""
        return SparkSystemAdmin(system_name, config)

    def get_consumer(self, system_name: str, config: Config) -> SparkSystemConsumer:
        """The consumer (pyarrow over the written files; the fed streams' consumer for fed streams)."""
        return SparkSystemConsumer(system_name, config)

    def get_producer(self, system_name: str, config: Config) -> SparkSinkProducer:
        """The producer (parquet per task per commit)."""
        return SparkSinkProducer(system_name, config)


__all__ = ["SparkSystemAdmin", "SparkSystemConsumer", "SparkSystemFactory"]
