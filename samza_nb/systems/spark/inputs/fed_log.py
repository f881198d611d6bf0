"""A Spark system's fed streams seen from the job: their metadata, their feeds, their consumer.

A stream is fed when this process registered a streaming DataFrame for it, or (in a process without the
registration: a container process, an executor) when the fed log already holds it. Its metadata and its
messages are the durable log's (:mod:`samza_nb.systems.log.system`, delegated to over
``<base>/<job.name>-<job.id>/spark-stream/<s>/log``): integer offsets, no end-of-stream.
:class:`LogFedStreams` is the part of
the Spark admin and consumer that knows them (:func:`.fed.fed_streams` makes it) and starts/stops their
feeds; :class:`FedStreamConsumer` is the log consumer that also publishes, per partition, the offset of
the next message it hands out, which the feed's back-pressure reads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from samza_nb.errors import SamzaError, SystemConsumersError
from samza_nb.serde.streams import StreamSerdes
from samza_nb.systems.log.durable_log import DurableLog
from samza_nb.systems.log.system import LogSystemAdmin, LogSystemConsumer
from samza_nb.systems.spark.inputs.feed import StreamFeed, feed_failure
from samza_nb.systems.spark.inputs.streaming import (
    PositionFile,
    fed_log_dir,
    fed_serdes_config,
    positions_dir,
    stream_root,
)
from samza_nb.systems.spark.registry import registered_frame
from samza_nb.systems.spark.settings import shared_across_machines

if TYPE_CHECKING:
    from samza_nb.api.metadata import SSPMetadata
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.config import Config


class LogFedStreams:
    """The fed streams of Spark system ``system`` (:class:`.fed.FedStreams`): which streams are fed, their
    metadata, their feeds, their consumer."""

    def __init__(self, config: Config, system: str) -> None:
        self.config = config
        self.system = system
        self._log: DurableLog | None = None
        self.feeds: dict[str, StreamFeed] = {}

    @property
    def log(self) -> DurableLog:
        """The fed log (opened on first use)."""
        if self._log is None:
            remote = shared_across_machines(self.config)
            self._log = DurableLog(fed_log_dir(self.config, self.system), remote_writers=remote)
        return self._log

    def is_fed(self, stream: str) -> bool:
        """True when ``stream`` is registered here as a streaming DataFrame, or, unregistered here, is
        already in the fed log."""
        frame = registered_frame(self.system, stream)
        if frame is not None:
            return frame.streaming
        return fed_log_dir(self.config, self.system).joinpath(stream, "stream.json").is_file()

    def ensure(self, stream: str) -> None:
        """Create the log stream of a stream registered here (with its ``partitions``, default 1)."""
        frame = registered_frame(self.system, stream)
        if frame is not None and frame.streaming:
            try:
                self.log.create_stream(stream, frame.partitions or 1)
            except SamzaError as exc:
                raise SamzaError(
                    f"stream {stream!r} of system {self.system!r}: {exc}; the registration asks for "
                    f"{frame.partitions or 1} (a fed stream keeps its partition count: remove "
                    f"{stream_root(self.config, self.system)} to start it over, or use another "
                    "job.logged.store.base.dir)"
                ) from None

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """The log's oldest/newest/upcoming of every partition of the fed ``streams`` (created first
        when registered here)."""
        for stream in streams:
            self.ensure(stream)
        return await LogSystemAdmin(self.log, self.system).get_metadata(streams)

    async def start_feeding(self, streams: Collection[str]) -> None:
        """Start the feed of every one of ``streams`` registered here as a streaming DataFrame
        (idempotent)."""
        for stream in sorted(streams):
            frame = registered_frame(self.system, stream)
            if frame is None or not frame.streaming:
                continue
            feed = self.feeds.get(stream)
            if feed is None or feed.frame is not frame:
                if feed is not None:
                    await asyncio.to_thread(feed.close)
                feed = self.feeds[stream] = StreamFeed(self.config, frame)
            await asyncio.to_thread(feed.start)

    async def stop_feeding(self) -> None:
        """Stop every feed started here, each after its current batch (idempotent)."""
        feeds = list(self.feeds.values())
        self.feeds.clear()
        for feed in feeds:
            await asyncio.to_thread(feed.close)

    def consumer(self) -> FedStreamConsumer:
        """A new consumer of the fed streams."""
        return FedStreamConsumer(self.config, self.system)

    def close(self) -> None:
        """Close the log handle (the feeds are stopped by :meth:`stop_feeding`)."""
        if self._log is not None:
            self._log.close()
            self._log = None


class FedStreamConsumer:
    """The durable log's consumer over the fed log (keys and values unpickled) that publishes each
    partition's position: at start the offset it starts from, then after each poll the offset after the
    last message it handed out."""

    def __init__(self, config: Config, system: str) -> None:
        self.system = system
        self._log = DurableLog(fed_log_dir(config, system))
        self._inner = LogSystemConsumer(self._log, system, StreamSerdes(fed_serdes_config(system), system))
        self._directory = positions_dir(config, system)
        self._starts: dict[SystemStreamPartition, str] = {}
        self._positions: dict[SystemStreamPartition, PositionFile] = {}

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from ``offset``."""
        self._inner.register(ssp, offset)
        self._starts[ssp] = offset

    async def start(self) -> None:
        """Start the log consumer and publish the starting positions."""
        await self._inner.start()
        for ssp, offset in self._starts.items():
            position = self._positions[ssp] = PositionFile(self._directory, ssp.stream, ssp.partition)
            position.write(int(offset))

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The log consumer's poll; publishes the positions of the partitions it returned. A stream whose
        feed failed in this process is a SystemConsumersError naming it and the batch's error."""
        for ssp in ssps:
            failure = feed_failure(self.system, ssp.stream)
            if failure is not None:
                raise SystemConsumersError(f"{ssp}: the feed of its streaming DataFrame failed: {failure}")
        result = await self._inner.poll(ssps, timeout)
        for ssp, envelopes in result.items():
            if envelopes:
                self._positions[ssp].write(int(envelopes[-1].offset) + 1)
        return result

    async def stop(self) -> None:
        """Stop the log consumer and close the position files."""
        await self._inner.stop()
        for position in self._positions.values():
            position.close()
        self._positions.clear()


__all__ = ["FedStreamConsumer", "LogFedStreams"]
