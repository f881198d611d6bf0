"""``samza-log``: a durable-log stream as a Spark data source (``pyspark.sql.datasource``), batch and
streaming, so intermediate streams and outputs on the log are queryable from Spark SQL.

    register_samza_log(spark)
    spark.read.format("samza-log").option("path", log_dir).option("stream", "counts").load()
    spark.readStream.format("samza-log").option("path", log_dir).option("stream", "counts").load()

Columns: ``partition`` (int), ``offset`` (long), ``timestamp`` (the record's event time, else its append
time), ``key`` and ``value`` (binary, as stored). Options ``key.serde`` and ``value.serde`` (``serde``: both;
``string``, ``json``, ``pickle`` or any serde :mod:`samza_nb.serde` knows) decode them: with
``string`` they are string columns; with any serde, a schema given to the reader
(``.schema("user string, n long, offset long")``) takes ``partition`` / ``offset`` / ``timestamp`` /
``key`` / ``value`` from the record and every other column from the decoded value's field of that name (a
dict value; a missing field is null). A batch read sees what was flushed when it was planned; a streaming
read's offsets are the next offset per partition (option ``startingOffsets``: ``earliest``, the default,
or ``latest``).
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.types import StructType

from samza_nb.errors import SamzaError
from samza_nb.serde import Serde, serde_for
from samza_nb.systems.log.durable_log import DurableLog

NAME = "samza-log"
RECORD_COLUMNS = ("partition", "offset", "timestamp", "key", "value")


@dataclass(frozen=True)
class LogRange(InputPartition):
    """Offsets ``start`` .. ``end - 1`` of one partition of the stream."""

    partition: int
    start: int
    end: int


def _option(options: dict[str, str], name: str) -> str:
    value = (options.get(name) or "").strip()
    if not value:
        raise SamzaError(f"data source {NAME}: option {name!r} is required (.option({name!r}, ...))")
    return value


def _open(path: str, stream: str) -> DurableLog:
    if not Path(path, stream, "stream.json").is_file():
        raise SamzaError(f"data source {NAME}: {path} holds no durable log stream {stream!r}")
    return DurableLog(path)


class SamzaLogDataSource(DataSource):
    """The ``samza-log`` data source (see the module)."""

    def __init__(self, options: dict[str, str]) -> None:
        super().__init__(options)
        self.path = _option(options, "path")
        self.stream = _option(options, "stream")
        both = (options.get("serde") or "").strip() or None
        self.key_serde = (options.get("key.serde") or "").strip() or both
        self.value_serde = (options.get("value.serde") or "").strip() or both
        self.starting = (options.get("startingOffsets") or "earliest").strip().lower()
        if self.starting not in ("earliest", "latest"):
            raise SamzaError(
                f"data source {NAME}: startingOffsets must be earliest or latest, not {self.starting!r}"
            )

    @classmethod
    def name(cls) -> str:
        """``samza-log``."""
        return NAME

    def schema(self) -> str:
        """The default columns (a string key or value with the ``string`` serde)."""
        key = "string" if self.key_serde == "string" else "binary"
        value = "string" if self.value_serde == "string" else "binary"
        return f"partition int, offset long, timestamp timestamp, key {key}, value {value}"

    def reader(self, schema: StructType) -> DataSourceReader:
        """A batch reader of what is flushed now."""
        return SamzaLogReader(self, schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """A stream reader (offsets: the next offset of each partition)."""
        return SamzaLogStreamReader(self, schema)


class _Rows:
    """Turns records into rows of ``schema`` (picklable: shipped to the Python workers)."""

    def __init__(self, source: SamzaLogDataSource, schema: StructType) -> None:
        self.path, self.stream = source.path, source.stream
        self.key_serde, self.value_serde = source.key_serde, source.value_serde
        self.columns = [field.name for field in schema.fields]

    def read(self, part: LogRange) -> Iterator[tuple[Any, ...]]:
        key_serde: Serde | None = serde_for(self.key_serde, "key.serde") if self.key_serde else None
        value_serde: Serde | None = serde_for(self.value_serde, "value.serde") if self.value_serde else None
        columns = self.columns
        with _open(self.path, self.stream) as log:
            for batch in log.batches(self.stream, part.partition, part.start):
                stamps = batch.timestamps
                for i, value in enumerate(batch.values):
                    offset = batch.base + i
                    if offset < part.start:
                        continue
                    if offset >= part.end:
                        return
                    key = batch.keys[i] if batch.keys is not None else None
                    stamp = stamps[i] if stamps is not None else None
                    if stamp is None:
                        stamp = batch.timestamp
                    if key_serde is not None and key is not None:
                        key = key_serde.from_bytes(key)
                    if value_serde is not None and value is not None:
                        value = value_serde.from_bytes(value)
                    record = {
                        "partition": part.partition,
                        "offset": offset,
                        "timestamp": dt.datetime.fromtimestamp(stamp / 1000, tz=dt.UTC),
                        "key": key,
                        "value": value,
                    }
                    yield tuple(
                        record[c] if c in record else (value.get(c) if isinstance(value, dict) else None)
                        for c in columns
                    )


class SamzaLogReader(DataSourceReader):
    """Batch reader: a Spark partition per log partition, up to what was flushed when planned."""

    def __init__(self, source: SamzaLogDataSource, schema: StructType) -> None:
        self.rows = _Rows(source, schema)
        with _open(source.path, source.stream) as log:
            self.ends = [log.upcoming(source.stream, p) for p in range(log.partitions(source.stream))]

    def partitions(self) -> Sequence[InputPartition]:
        """One range per log partition."""
        return [LogRange(p, 0, end) for p, end in enumerate(self.ends)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        """The rows of one range."""
        assert isinstance(partition, LogRange)
        return self.rows.read(partition)


class SamzaLogStreamReader(DataSourceStreamReader):
    """Stream reader: offsets ``{"<partition>": next offset}``; a micro-batch reads each partition's new
    flushed records."""

    def __init__(self, source: SamzaLogDataSource, schema: StructType) -> None:
        self.source = source
        self.rows = _Rows(source, schema)

    def _heads(self) -> dict[str, int]:
        with _open(self.source.path, self.source.stream) as log:
            stream = self.source.stream
            return {str(p): log.upcoming(stream, p) for p in range(log.partitions(stream))}

    def initialOffset(self) -> dict[str, int]:
        """Every partition from 0 (``earliest``) or from its head now (``latest``)."""
        heads = self._heads()
        return heads if self.source.starting == "latest" else dict.fromkeys(heads, 0)

    def latestOffset(self, start: dict[str, int] | None = None, limit: Any = None) -> dict[str, int]:
        """The head (next offset) of every partition."""
        return self._heads()

    def partitions(self, start: dict[str, int], end: dict[str, int]) -> Sequence[InputPartition]:
        """A range per partition with new records."""
        return [
            LogRange(int(p), int(start.get(p, 0)), int(stop))
            for p, stop in sorted(end.items(), key=lambda item: int(item[0]))
            if int(stop) > int(start.get(p, 0))
        ]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        """The rows of one range."""
        assert isinstance(partition, LogRange)
        return self.rows.read(partition)

    def commit(self, end: dict[str, int]) -> None:
        """Nothing to release: the log keeps its records."""


def register_samza_log(spark: Any) -> None:
    """Register the ``samza-log`` data source on ``spark`` (a SparkSession). Its Python workers run the
    driver's Python (which has samza_nb and pyarrow) unless ``PYSPARK_PYTHON`` names another."""
    context = spark.sparkContext
    before = context.pythonExec
    if "PYSPARK_PYTHON" not in os.environ:
        context.pythonExec = sys.executable
    try:
        spark.dataSource.register(SamzaLogDataSource)
    finally:
        context.pythonExec = before


__all__ = ["NAME", "RECORD_COLUMNS", "LogRange", "SamzaLogDataSource", "register_samza_log"]
