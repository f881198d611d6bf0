"""A custom input system: bounded sequences of numbers, generated on the fly (nothing stored).

``systems.<name>.samza.factory = samza_nb_ext.system.SequenceSystemFactory``; per stream
``systems.<name>.streams.<stream>.count = N`` (messages per partition, required) and ``.partitions = P``
(default 1). Partition p of a stream holds the integers p, p + P, p + 2P, ... (N of them) at offsets
"0" .. "N-1", then end-of-stream. A load generator, and a model for wrapping any source (an API, a
database, files) as a system.

The plug-in point: ``systems.<name>.samza.factory`` names a SystemFactory (samza_nb.systems.base) whose
``get_admin``, ``get_consumer`` and ``get_producer`` build the system's parts. The admin reports partition
metadata and orders offsets; the consumer reads registered partitions from their starting offsets in
batches, ending a bounded partition with an end-of-stream envelope; the producer writes outputs (this
system has none: sending to it is an error).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from samza_nb import ConfigError, IncomingMessageEnvelope, OutgoingMessageEnvelope, SystemStreamPartition
from samza_nb.api.metadata import SSPMetadata
from samza_nb.errors import SystemProducerError

BATCH = 1000


def _shape(config: Mapping[str, str], system: str, stream: str) -> tuple[int, int]:
    """(messages per partition, partitions) of ``stream``; ConfigError naming the key when missing."""
    prefix = f"systems.{system}.streams.{stream}"
    count_key = f"{prefix}.count"
    if count_key not in config:
        raise ConfigError(f"missing required config {count_key} (messages per partition)", key=count_key)
    values = []
    for key, default in ((count_key, None), (f"{prefix}.partitions", "1")):
        raw = config.get(key, default)
        try:
            value = int(str(raw))
        except ValueError:
            value = -1
        if value < (0 if key == count_key else 1):
            raise ConfigError(f"{key}={raw!r}: expected a whole number", key=key)
        values.append(value)
    return values[0], values[1]


class SequenceAdmin:
    """Metadata from config: offsets "0" .. "N-1" in every partition; integer offset order."""

    def __init__(self, system: str, config: Mapping[str, str]) -> None:
        self._system = system
        self._config = config

    async def get_metadata(self, streams: Collection[str]) -> dict[str, dict[int, SSPMetadata]]:
        """Every partition: oldest "0", newest "N-1", upcoming "N" (empty when N is 0)."""
        result = {}
        for stream in streams:
            count, partitions = _shape(self._config, self._system, stream)
            meta = SSPMetadata("0", str(count - 1), str(count)) if count else SSPMetadata(None, None, "0")
            result[stream] = dict.fromkeys(range(partitions), meta)
        return result

    def offset_comparator(self, a: str, b: str) -> int:
        """Integer order; end-of-stream last."""
        x, y = (float("inf") if o == "END_OF_STREAM" else int(o) for o in (a, b))
        return (x > y) - (x < y)

    def offset_after(self, offset: str) -> str:
        """The next integer."""
        return str(int(offset) + 1)

    async def create_stream(self, stream: str, partitions: int) -> None:
        """Streams exist by configuration only."""
        raise SystemProducerError(
            f"system {self._system!r} generates its streams; it cannot create {stream!r}"
        )


class SequenceConsumer:
    """Generates up to BATCH envelopes per partition per poll, from each partition's position."""

    def __init__(self, system: str, config: Mapping[str, str]) -> None:
        self._system = system
        self._config = config
        self._positions: dict[SystemStreamPartition, int] = {}
        self._shapes: dict[SystemStreamPartition, tuple[int, int]] = {}
        self._ended: set[SystemStreamPartition] = set()

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Start ``ssp`` at ``offset``."""
        self._shapes[ssp] = _shape(self._config, self._system, ssp.stream)
        self._positions[ssp] = int(offset)

    async def start(self) -> None:
        """Nothing to connect."""

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The next batch of every partition (never waits: everything is available at once)."""
        result: dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = {}
        for ssp in ssps:
            if ssp in self._ended:
                continue
            count, partitions = self._shapes[ssp]
            start = self._positions[ssp]
            stop = min(start + BATCH, count)
            batch = [
                IncomingMessageEnvelope(ssp, str(i), None, ssp.partition + i * partitions)
                for i in range(start, stop)
            ]
            self._positions[ssp] = stop
            if stop >= count:
                self._ended.add(ssp)
                batch.append(IncomingMessageEnvelope.end_of_stream(ssp))
            result[ssp] = batch
        return result

    async def stop(self) -> None:
        """Nothing to disconnect."""


class SequenceProducer:
    """The system is input-only: sending to it fails with a clear error."""

    def __init__(self, system: str) -> None:
        self._system = system

    async def start(self) -> None:
        """Nothing to connect."""

    def send(self, source: str, envelope: OutgoingMessageEnvelope) -> None:
        """Refused."""
        raise SystemProducerError(
            f"system {self._system!r} is input-only; {source!r} cannot send to {envelope.system_stream}"
        )

    async def flush(self, source: str) -> None:
        """Nothing was sent."""

    async def stop(self) -> None:
        """Nothing to disconnect."""


class SequenceSystemFactory:
    """``systems.<name>.samza.factory = samza_nb_ext.system.SequenceSystemFactory``."""

    def get_admin(self, system_name: str, config: Any) -> SequenceAdmin:
        """The admin of ``system_name``."""
        return SequenceAdmin(system_name, config)

    def get_consumer(self, system_name: str, config: Any) -> SequenceConsumer:
        """A consumer of ``system_name``."""
        return SequenceConsumer(system_name, config)

    def get_producer(self, system_name: str, config: Any) -> SequenceProducer:
        """The (refusing) producer of ``system_name``."""
        return SequenceProducer(system_name)
