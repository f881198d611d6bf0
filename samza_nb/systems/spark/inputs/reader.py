"""Reading a written bounded input with pyarrow: :class:`BoundedConsumer` (docs/architecture.md §13).

SSP partition n is manifest partition n; the offset of a row is its index in the partition ("0", "1", …);
end-of-stream follows the last row. Starting at row k opens the file holding it at the row group holding it
(a seek: earlier row groups are never read), then reads record batches of :data:`POLL_BATCH` rows, each
converted once (a ``to_pylist()`` per column) into envelopes: the message is the ``value`` column's value,
else the row as a dict of every column; the key is the key column's value (None without one); the
timestamp is the timestamp column in epoch ms (timestamps and dates converted, integers taken as ms).
Only pyarrow is needed, so the same consumer runs on the driver or on an executor. Starting marks the input
``read`` (a changed DataFrame then needs ``reset.offset``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterator, Mapping, Sequence
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.errors import SamzaError, SystemConsumersError
from samza_nb.systems.offsets import parse_integer_offset
from samza_nb.systems.spark.inputs.manifest import Manifest, mark_read, not_written, read_manifest
from samza_nb.systems.spark.settings import input_directory

if TYPE_CHECKING:
    import pyarrow as pa

    from samza_nb.config import Config

SPARK_OFFSET: Final = "a Spark row index (expected 0, 1, ...)"
"""What an offset of this system is, for errors about one."""

POLL_BATCH: Final = 4096
"""Rows per record batch, and the most rows of one partition a poll returns."""

_MS_PER_DAY: Final = 86_400_000


def timestamps_in_ms(column: pa.Array) -> list[int | None]:
    """The values of a timestamp, date or integer column as epoch milliseconds (integers as they are); a
    SamzaError for any other type."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_timestamp(kind):
        return column.cast(pa.timestamp("ms", kind.tz), safe=False).cast(pa.int64()).to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_date32(kind):
        return pc.multiply(column.cast(pa.int32()).cast(pa.int64()), _MS_PER_DAY).to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_date64(kind):
        return column.cast(pa.int64()).to_pylist()  # type: ignore[no-any-return]
    if pa.types.is_integer(kind):
        return column.to_pylist()  # type: ignore[no-any-return]
    raise SamzaError(f"a timestamp column must be a timestamp, date or integer, not {kind}")


def _row_batches(files: list[Path], start: int, columns: list[str] | None) -> Iterator[pa.RecordBatch]:
    """Record batches of ``files`` (in order) from row ``start`` on, skipping whole files and row groups
    before it by their metadata."""
    import pyarrow.parquet as pq

    skip = start
    for path in files:
        with pq.ParquetFile(path) as parquet:
            metadata = parquet.metadata
            if skip >= metadata.num_rows:
                skip -= metadata.num_rows
                continue
            group = 0
            while skip >= (rows := metadata.row_group(group).num_rows):
                skip -= rows
                group += 1
            groups = range(group, metadata.num_row_groups)
            for batch in parquet.iter_batches(
                POLL_BATCH, row_groups=groups, columns=columns, use_threads=False
            ):
                if skip:
                    if skip >= batch.num_rows:
                        skip -= batch.num_rows
                        continue
                    batch = batch.slice(skip)
                    skip = 0
                yield batch


class _Partition:
    """One registered partition: where it is, how its rows become envelopes, whether it has ended."""

    __slots__ = ("batches", "ended", "key", "position", "rows", "ssp", "timestamp", "value")

    def __init__(self, ssp: SystemStreamPartition, manifest: Manifest, start: int) -> None:
        part = manifest.partitions[ssp.partition]
        if start > part.rows:
            raise SystemConsumersError(f"{ssp}: offset {start} is past its last row ({part.rows} rows)")
        self.ssp = ssp
        self.rows = part.rows
        self.position = start
        self.ended = False
        self.key = manifest.key
        self.value = manifest.value
        self.timestamp = manifest.timestamp
        columns = (
            None
            if self.value is None
            else list(dict.fromkeys(c for c in (self.key, self.value, self.timestamp) if c))
        )
        self.batches = (
            _row_batches(manifest.files(ssp.partition), start, columns) if start < part.rows else None
        )

    def _keys_and_messages(self, batch: pa.RecordBatch) -> tuple[Any, list[Any]]:
        """The keys (None each without a key column) and messages of ``batch``, each column converted
        once."""
        key, value = self.key, self.value
        if value is None:
            names = batch.schema.names
            columns = [column.to_pylist() for column in batch.columns]
            messages = list(map(dict, map(zip, repeat(names), zip(*columns, strict=True))))
            return (columns[names.index(key)] if key is not None else repeat(None)), messages
        messages = batch.column(value).to_pylist()
        if key is None:
            return repeat(None), messages
        return (messages if key == value else batch.column(key).to_pylist()), messages

    def read(self) -> list[IncomingMessageEnvelope]:
        """The next record batch's envelopes, plus end-of-stream after the last row."""
        envelopes: list[IncomingMessageEnvelope] = []
        if self.position < self.rows and self.batches is not None:
            batch = next(self.batches, None)
            if batch is None:
                raise SystemConsumersError(f"{self.ssp}: its files end at row {self.position} of {self.rows}")
            count = batch.num_rows
            start = self.position
            keys, messages = self._keys_and_messages(batch)
            if self.timestamp is not None:
                try:
                    stamps: Any = timestamps_in_ms(batch.column(self.timestamp))
                except SamzaError as exc:
                    raise SystemConsumersError(f"{self.ssp}: column {self.timestamp!r}: {exc}") from None
            else:
                stamps = repeat(None)
            envelopes = list(
                map(
                    IncomingMessageEnvelope,
                    repeat(self.ssp, count),
                    map(str, range(start, start + count)),
                    keys,
                    messages,
                    stamps,
                )
            )
            self.position = start + count
        if self.position >= self.rows:
            envelopes.append(IncomingMessageEnvelope.end_of_stream(self.ssp))
            self.ended = True
            self.batches = None
        return envelopes


class BoundedConsumer:
    """Reads registered bounded partitions from their manifests' files (see the module)."""

    def __init__(self, system: str, config: Config) -> None:
        self.system = system
        self.config = config
        self._starts: dict[SystemStreamPartition, int] = {}
        self._partitions: dict[SystemStreamPartition, _Partition] = {}

    def register(self, ssp: SystemStreamPartition, offset: str) -> None:
        """Read ``ssp`` from row index ``offset``."""
        self._starts[ssp] = parse_integer_offset(ssp, offset, SPARK_OFFSET)

    async def start(self) -> None:
        """Open every registered partition's manifest and mark its input read; a missing manifest or
        partition is a SamzaError naming the stream."""
        self._partitions = await asyncio.to_thread(self._open)

    def _open(self) -> dict[SystemStreamPartition, _Partition]:
        manifests: dict[str, Manifest] = {}
        partitions = {}
        for ssp, start in self._starts.items():
            manifest = manifests.get(ssp.stream)
            if manifest is None:
                manifest = manifests[ssp.stream] = self._manifest(ssp.stream)
                mark_read(manifest.directory)
            if ssp.partition >= len(manifest.partitions):
                raise SystemConsumersError(
                    f"{ssp}: stream {ssp.stream!r} has {len(manifest.partitions)} partitions "
                    f"in {manifest.directory}"
                )
            partitions[ssp] = _Partition(ssp, manifest, start)
        return partitions

    def _manifest(self, stream: str) -> Manifest:
        directory = input_directory(self.config, self.system, stream)
        manifest = read_manifest(directory)
        if manifest is None:
            raise not_written(self.system, stream, directory)
        return manifest

    async def poll(
        self, ssps: Collection[SystemStreamPartition], timeout: float
    ) -> Mapping[SystemStreamPartition, Sequence[IncomingMessageEnvelope]]:
        """The next record batch of each of ``ssps`` (end-of-stream after the last row), at once. When
        every one of them has ended, waits ``timeout`` and returns nothing."""
        result: dict[SystemStreamPartition, Sequence[IncomingMessageEnvelope]] = {}
        partitions = self._partitions
        for ssp in ssps:
            partition = partitions.get(ssp)
            if partition is None:
                raise SystemConsumersError(f"{ssp} was never registered with this consumer")
            if not partition.ended:
                envelopes = partition.read()
                if envelopes:
                    result[ssp] = envelopes
        if not result and timeout > 0:
            await asyncio.sleep(timeout)
        return result

    async def stop(self) -> None:
        """Drop the open readers."""
        self._partitions = {}


__all__ = ["POLL_BATCH", "SPARK_OFFSET", "BoundedConsumer", "timestamps_in_ms"]
