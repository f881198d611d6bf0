"""The feed: a registered streaming DataFrame written, on the driver, into its durable log by
``writeStream.foreachBatch`` (docs/architecture.md §13).

Each micro-batch is converted once to Arrow; its rows become records of the log stream named like the
registered stream: the message is the ``value`` column's value (else the row as a dict), the key the
``key`` column's value, both pickled (:data:`~samza_nb.systems.spark.inputs.streaming.FED_SERDE`); the
record's timestamp is the ``timestamp`` column in epoch ms (the append time without one). With
``partitions = N`` (default 1) a row's partition is ``key_partition(key bytes, N)`` as for a bounded
stream (:class:`.keys.RowPartitioner`: a row without key goes to partition 0), so a fed stream is
co-partitioned with a Kafka or log stream of N partitions. The batch is appended and flushed (fsync)
before the batch function returns, so Spark commits only what is durable: a batch Spark runs again after a
crash repeats its rows (at-least-once).

Back-pressure: before writing, the batch function waits while the stream's backlog (flushed messages its
consumers have not been handed, from the positions they publish) exceeds ``systems.<s>.spark.max.backlog``;
it is woken when a position moves, never by a timer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.systems.log.durable_log import DurableLog
from samza_nb.systems.log.wake import FlushWaiter
from samza_nb.systems.spark.inputs.keys import RowPartitioner, key_serde
from samza_nb.systems.spark.inputs.reader import timestamps_in_ms
from samza_nb.systems.spark.inputs.streaming import (
    FED_SERDE,
    PositionFile,
    backlog,
    checkpoint_dir,
    fed_log_dir,
    max_backlog,
    positions_dir,
)
from samza_nb.systems.spark.settings import shared_across_machines

if TYPE_CHECKING:
    from samza_nb.config import Config
    from samza_nb.systems.spark.registry import RegisteredFrame

log = logging.getLogger(__name__)

RECHECK_S = 1.0
"""Longest wait of a held batch before it looks at the backlog again (it is woken by positions moving;
this only bounds a missed wake-up)."""


_failures: dict[tuple[str, str], str] = {}
_failures_lock = threading.Lock()


_running: dict[tuple[str, str], StreamFeed] = {}


def running_feeds() -> list[StreamFeed]:
    """The feeds started in this process and not stopped yet (for status displays and measurements)."""
    with _failures_lock:
        return list(_running.values())


def feed_failure(system: str, stream: str) -> str | None:
    """Why the feed of ``stream`` in this process failed (its query then ended), if it did; cleared when
    the feed starts again."""
    with _failures_lock:
        return _failures.get((system, stream))


class FeedStopped(SamzaError):
    """Raised inside a batch that was still waiting when its feed stopped: Spark does not commit it, and
    runs it again when the feed next starts."""


@dataclass(frozen=True)
class BatchTiming:
    """When one micro-batch's function began, was released by back-pressure, and had flushed its rows
    (epoch ms)."""

    batch_id: int
    rows: int
    began_ms: int
    released_ms: int
    flushed_ms: int


class StreamFeed:
    """Feeds one registered streaming DataFrame into its log stream while started.

    ``batches`` and ``rows`` count what was written; ``held`` is True while a batch waits for the backlog
    to fall; ``timings`` keeps the last 1,000 batches' :class:`BatchTiming`. :meth:`start` is idempotent;
    :meth:`stop` lets the running batch finish (a batch still held by back-pressure raises
    :class:`FeedStopped`, so Spark does not commit it) and stops the query.
    """

    def __init__(self, config: Config, frame: RegisteredFrame) -> None:
        self.config = config
        self.frame = frame
        self.system, self.stream = frame.system, frame.stream
        self.partitions = frame.partitions or 1
        self.max_backlog = max_backlog(config, self.system)
        self.remote = shared_across_machines(config)
        self.log = DurableLog(fed_log_dir(config, self.system), remote_writers=self.remote)
        self.log.create_stream(self.stream, self.partitions)
        directory = positions_dir(config, self.system)
        self._positions = [PositionFile(directory, self.stream, n) for n in range(self.partitions)]
        self._partition_of = RowPartitioner(self.partitions, key_serde(config, self.system, self.stream))
        self._lock = threading.Lock()
        self._query: Any = None
        self._stopping = False
        self._waiter: FlushWaiter | None = None
        self.batches = 0
        self.rows = 0
        self.held = False
        self.timings: deque[BatchTiming] = deque(maxlen=1000)

    def __repr__(self) -> str:
        return f"StreamFeed({self.system}.{self.stream})"

    @property
    def query(self) -> Any:
        """The running StreamingQuery (None before :meth:`start`)."""
        return self._query

    @property
    def active(self) -> bool:
        """True while the query runs."""
        return self._query is not None and bool(self._query.isActive)

    def backlog(self) -> int:
        """Flushed messages the stream's consumers have not been handed yet."""
        return backlog(self.log, self._positions, self.stream)

    def start(self) -> None:
        """Start the query (nothing when it runs); a SamzaError naming the stream when Spark refuses it."""
        with self._lock:
            if self.active:
                return
            self._stopping = False
        with _failures_lock:
            _failures.pop((self.system, self.stream), None)
        location = checkpoint_dir(self.config, self.system, self.stream)
        try:
            writer = (
                self.frame.frame.writeStream.foreachBatch(self._batch)
                .option("checkpointLocation", str(location))
                .queryName(f"samza-feed-{self.config.job_name()}-{self.system}-{self.stream}")
            )
            query = writer.start()
        except Exception as exc:
            raise SamzaError(
                f"stream {self.stream!r}: the feed of its streaming DataFrame did not start: {exc}"
            ) from exc
        with self._lock:
            self._query = query
        with _failures_lock:
            _running[(self.system, self.stream)] = self
        log.info("feeding stream %s.%s into %s", self.system, self.stream, self.log.directory)

    def stop(self) -> None:
        """Stop the query after its current batch (idempotent)."""
        with self._lock:
            query = self._query
            if query is None:
                return
            self._stopping = True  # releases a batch held by back-pressure (it raises FeedStopped)
            if self._waiter is not None:
                self._waiter.signal()
        try:  # waits for a running batch: Spark's callback into Python is not interrupted
            query.stop()
        finally:
            with self._lock:
                self._query = None
            with _failures_lock:
                if _running.get((self.system, self.stream)) is self:
                    del _running[(self.system, self.stream)]
        error = _query_error(query)
        if error is not None and "FeedStopped" not in error:
            log.warning("the feed of stream %s.%s had failed: %s", self.system, self.stream, error)

    def close(self) -> None:
        """Stop, then close the log and the position files."""
        self.stop()
        for position in self._positions:
            position.close()
        self.log.close()

    # -- the batch function (on Spark's callback thread) ---------------------------------------------------
    def _batch(self, batch_df: Any, batch_id: int) -> None:
        with self._lock:
            if self._stopping:
                raise FeedStopped(f"stream {self.stream!r}: the feed stopped before batch {batch_id}")
        began = time.time_ns() // 1_000_000
        self._wait_for_backlog(batch_id)
        released = time.time_ns() // 1_000_000
        try:
            table = batch_df.toArrow()
            if table.num_rows:
                self._append(table)
                self.log.flush()
        except Exception as exc:
            if not self._stopping:  # else Spark cancelled the batch's job: it runs again next time
                with _failures_lock:
                    _failures[(self.system, self.stream)] = f"batch {batch_id}: {type(exc).__name__}: {exc}"
            raise
        self.batches += 1
        self.rows += table.num_rows
        self.timings.append(
            BatchTiming(batch_id, table.num_rows, began, released, time.time_ns() // 1_000_000)
        )

    def _wait_for_backlog(self, batch_id: int) -> None:
        if self.backlog() <= self.max_backlog:
            return
        waiter = FlushWaiter((p.path for p in self._positions), remote_writers=self.remote)
        with self._lock:
            self._waiter = waiter
        try:
            while self.backlog() > self.max_backlog:
                with self._lock:
                    if self._stopping:
                        raise FeedStopped(
                            f"stream {self.stream!r}: the feed stopped while batch {batch_id} waited"
                        )
                self.held = True
                waiter.wait(RECHECK_S)
        finally:
            self.held = False
            with self._lock:
                self._waiter = None
            waiter.close()

    def _append(self, table: Any) -> None:
        frame, count = self.frame, table.num_rows
        values = table.column(frame.value).to_pylist() if frame.value else table.to_pylist()
        keys = table.column(frame.key).to_pylist() if frame.key else None
        stamps = None
        if frame.timestamp:
            try:
                stamps = timestamps_in_ms(table.column(frame.timestamp))
            except SamzaError as exc:
                raise SamzaError(f"stream {self.stream!r}: column {frame.timestamp!r}: {exc}") from None
        encode = FED_SERDE.to_bytes
        encoded_values = [None if v is None else encode(v) for v in values]
        encoded_keys = None if keys is None else [None if k is None else encode(k) for k in keys]
        if self.partitions == 1:
            self.log.append(self.stream, 0, encoded_values, encoded_keys, timestamps=stamps)
            return
        by_partition: dict[int, list[int]] = {}
        for index, key in enumerate(keys or [None] * count):
            by_partition.setdefault(self._partition_of(key), []).append(index)
        for number, rows in sorted(by_partition.items()):
            self.log.append(
                self.stream,
                number,
                [encoded_values[i] for i in rows],
                None if encoded_keys is None else [encoded_keys[i] for i in rows],
                timestamps=None if stamps is None else [stamps[i] for i in rows],
            )


def _query_error(query: Any) -> str | None:
    try:
        error = query.exception()
    except Exception as exc:  # a query that never ran
        return str(exc)
    return None if error is None else str(error)


__all__ = ["BatchTiming", "FeedStopped", "StreamFeed", "feed_failure", "running_feeds"]
