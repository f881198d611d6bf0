"""The stream-stream join: an interval join with a TTL.

Each side's messages are kept by join key in the store named after the op id. A message joins every kept
message of the other side with the same key whose time is within ``ttl_ms`` of its own
(``join_fn(left message, right message)``, whichever side arrived last; the result's timestamp is the
later of the two), then is kept itself.

Messages with a timestamp join on event time: a kept message is purged once the input watermark passes
its time + ``ttl_ms``; a message that arrives already that late still joins what is kept but is not kept
(counted in the op's ``late`` metric). Messages without a timestamp join on processing time (the
container clock when they arrive), only with other such messages; they are purged by the task's window
timer once the clock passes their time + ``ttl_ms``. ``purged`` counts the messages purged.

Inputs that never carry a watermark (a durable log or Kafka stream whose records carry their append time)
would keep event-time messages forever; so while no watermark came, the window timer purges as if the
watermark were the latest event time seen minus ``ttl_ms``: a kept message goes once a message
``2 * ttl_ms`` newer arrived (a partner more than ``ttl_ms`` out of order may then miss it).

Store layout: ``(clock, side, key)`` → ``[(time, message), ...]`` sorted by time; clock 0 is event time,
1 processing time; side 0 is the left stream.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from typing import Any

from samza_nb.control.messages import WATERMARK_NOT_EXIST
from samza_nb.errors import SamzaError
from samza_nb.operators.graph import JoinSpec
from samza_nb.operators.impl.base import Emit, OperatorImpl, OpRuntime

EVENT, PROCESSING = 0, 1


def _time_of(entry: tuple[int, Any]) -> int:
    return entry[0]


class JoinState:
    """The kept messages of one clock: per side, key → entries sorted by time; one purge check per
    (side, key) at its earliest entry's expiry."""

    def __init__(self, clock: int, ttl_ms: int, store: Any, metrics: dict[str, int]) -> None:
        self.clock = clock
        self.ttl = ttl_ms
        self.store = store
        self.metrics = metrics
        self.sides: tuple[dict[Any, list[tuple[int, Any]]], dict[Any, list[tuple[int, Any]]]] = ({}, {})
        self._checks: list[tuple[int, int, int, Any]] = []  # (expiry, n, side, key)
        self._scheduled: dict[tuple[int, Any], int] = {}
        self._seq = itertools.count()

    def _schedule(self, side: int, key: Any, expiry: int) -> None:
        self._scheduled[(side, key)] = expiry
        heapq.heappush(self._checks, (expiry, next(self._seq), side, key))

    def add(self, side: int, key: Any, timestamp: int, message: Any) -> None:
        """Keep ``message`` of ``side`` under ``key``."""
        entries = self.sides[side].get(key)
        entry = (timestamp, message)
        if entries is None:
            entries = self.sides[side][key] = [entry]
            self._schedule(side, key, timestamp + self.ttl)
        elif timestamp >= entries[-1][0]:
            entries.append(entry)
        else:
            bisect.insort(entries, entry, key=_time_of)
            if entries[0] is entry:
                self._schedule(side, key, timestamp + self.ttl)
        self.store.put((self.clock, side, key), entries)

    def purge(self, mark: int) -> None:
        """Forget every kept message whose time + ttl is before ``mark``."""
        checks, scheduled, ttl = self._checks, self._scheduled, self.ttl
        while checks and checks[0][0] < mark:
            expiry, _, side, key = heapq.heappop(checks)
            if scheduled.get((side, key)) != expiry:
                continue  # superseded by an earlier check of the same key
            entries = self.sides[side][key]
            cut = bisect.bisect_left(entries, mark - ttl, key=_time_of)
            self.metrics["purged"] += cut
            del entries[:cut]
            if entries:
                self.store.put((self.clock, side, key), entries)
                self._schedule(side, key, entries[0][0] + ttl)
            else:
                del self.sides[side][key]
                del scheduled[(side, key)]
                self.store.delete((self.clock, side, key))

    def restore(self, side: int, key: Any, entries: list[tuple[int, Any]]) -> None:
        """Take back the stored entries of ``(side, key)``."""
        kept = sorted(((int(t), m) for t, m in entries), key=_time_of)
        if kept:
            self.sides[side][key] = kept
            self._schedule(side, key, kept[0][0] + self.ttl)


class JoinImpl(OperatorImpl):
    """The join operator (see the module docstring); input 0 is the left stream, input 1 the right."""

    def __init__(self, spec: JoinSpec, runtime: OpRuntime) -> None:
        super().__init__(spec, runtime)
        self.ttl = spec.ttl_ms
        self.metrics = runtime.op_metrics(self.op_id, late=0, purged=0)
        self.event: JoinState | None = None
        self.processing: JoinState | None = None
        self.latest_event = WATERMARK_NOT_EXIST  # the latest event time seen (purges without watermarks)

    def init(self) -> None:
        store = self.runtime.context.get_store(self.op_id)
        self.event = JoinState(EVENT, self.ttl, store, self.metrics)
        self.processing = JoinState(PROCESSING, self.ttl, store, self.metrics)
        for entry in store.all():
            try:
                (clock, side, key), entries = entry
                if clock not in (EVENT, PROCESSING) or side not in (0, 1):
                    raise ValueError(clock, side)
                (self.event if clock == EVENT else self.processing).restore(side, key, entries)
            except (TypeError, ValueError):
                raise SamzaError(
                    f"store {self.op_id!r} holds {entry!r}, which is not the state of a join: "
                    "was the op id used for another operator?"
                ) from None

    def entry(self, index: int) -> Emit:
        assert isinstance(self.spec, JoinSpec) and self.event is not None and self.processing is not None
        spec, emit, ttl, metrics, now = self.spec, self.emit, self.ttl, self.metrics, self.runtime.now
        key_fn = spec.key_fn if index == 0 else spec.other_key_fn
        join_fn, left = spec.join_fn, index == 0
        event, processing, other = self.event, self.processing, 1 - index

        def on_join(message: Any, timestamp: int | None) -> None:
            if timestamp is None:
                state, timestamp = processing, now()
            else:
                state = event
                if timestamp > self.latest_event:
                    self.latest_event = timestamp
            key = key_fn(message)
            partners = state.sides[other].get(key)
            if partners:
                low, high = timestamp - ttl, timestamp + ttl
                for time, partner in partners:
                    if low <= time <= high:
                        later = time if time > timestamp else timestamp
                        emit(join_fn(message, partner) if left else join_fn(partner, message), later)
            if state is event and timestamp + ttl < self.input_watermark:
                metrics["late"] += 1
                return
            state.add(index, key, timestamp, message)

        return on_join

    def handle_watermark(self, watermark: int) -> None:
        if self.event is not None:
            self.event.purge(watermark)

    @property
    def has_timer(self) -> bool:
        return True

    def on_timer(self, now_ms: int) -> None:
        if self.processing is not None:
            self.processing.purge(now_ms)
        if self.event is not None and self.input_watermark == WATERMARK_NOT_EXIST:
            self.event.purge(self.latest_event - self.ttl)


__all__ = ["JoinImpl", "JoinState"]
