"""End-of-stream and watermark bookkeeping of one task's input partitions (Samza's EndOfStreamStates and
WatermarkStates).

Each tracked input partition (SSP) has a producer count: 1 for a source partition, the number of upstream
tasks for a partition of an intermediate stream. A control message with a task name counts for that
producer; one without a task name (from a source, or re-broadcast by the aggregating task) is final for the
partition. Both classes serve one task's run loop: they are not thread-safe.

``state_of(ssp)`` gives a JSON-able snapshot of a partition's bookkeeping and ``restore(ssp, state)`` takes
it back, so the bookkeeping can be stored and committed with the offsets: a restarted task that had
end-of-stream from 1 of 2 producers still waits only for the other.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Generic, Protocol, TypeGuard, TypeVar

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.control.messages import WATERMARK_NOT_EXIST
from samza_nb.errors import SamzaError

log = logging.getLogger(__name__)

DEFAULT_QUORUM: Final = 0.5
"""Samza's default share of producers that must be active for an idle-excluding watermark
(``TaskConfig.DEFAULT_WATERMARK_QUORUM_SIZE_PERCENTAGE``)."""


def _wall_clock_ms() -> float:
    return time.time() * 1000.0


def _check_counts(producer_counts: Mapping[SystemStreamPartition, int]) -> None:
    for ssp, count in producer_counts.items():
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise SamzaError(f"producer count of {ssp} must be an int >= 1, got {count!r}")


def _by_stream(
    ssps: Mapping[SystemStreamPartition, Any],
) -> dict[SystemStream, tuple[SystemStreamPartition, ...]]:
    grouped: dict[SystemStream, list[SystemStreamPartition]] = {}
    for ssp in ssps:
        grouped.setdefault(ssp.system_stream, []).append(ssp)
    return {ss: tuple(sorted(members)) for ss, members in grouped.items()}


def _unknown(ssp: SystemStreamPartition, what: str) -> SamzaError:
    return SamzaError(f"{what}: {ssp} is not an input partition this task tracks")


def _malformed(ssp: SystemStreamPartition, what: str, state: object, why: str) -> SamzaError:
    text = repr(state)
    if len(text) > 120:
        text = text[:117] + "..."
    return SamzaError(f"cannot restore the {what} state of {ssp} from {text}: {why}")


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


class _Counted(Protocol):
    total: int


_S = TypeVar("_S", bound=_Counted)


class _PerPartition(Generic[_S]):
    """The bookkeeping state of each tracked partition, and the partitions of each stream."""

    _what: ClassVar[str]
    """What the bookkeeping is about, for errors."""

    def __init__(self, states: dict[SystemStreamPartition, _S]) -> None:
        self._states = states
        self._streams = _by_stream(states)

    @property
    def ssps(self) -> tuple[SystemStreamPartition, ...]:
        """The tracked partitions, sorted."""
        return tuple(sorted(self._states))

    def __contains__(self, ssp: object) -> bool:
        return ssp in self._states

    def producer_count(self, ssp: SystemStreamPartition) -> int:
        """The number of producers ``ssp`` takes control messages from."""
        return self._state(ssp).total

    def _state(self, ssp: SystemStreamPartition) -> _S:
        state = self._states.get(ssp)
        if state is None:
            raise _unknown(ssp, self._what)
        return state

    def _check_stored(self, ssp: SystemStreamPartition, state: object) -> None:
        """A SamzaError unless ``state`` is an object with a valid producer count ``total``."""
        if not isinstance(state, Mapping):
            raise _malformed(ssp, self._what, state, "expected an object")
        total = state.get("total")
        if not _is_int(total) or total < 1:
            raise _malformed(ssp, self._what, state, '"total" must be an int >= 1')

    def _same_producers(self, ssp: SystemStreamPartition, state: Mapping[str, Any]) -> bool:
        """True when the stored ``state`` counted the producers ``ssp`` has now; else warns."""
        total, now = state["total"], self._states[ssp].total
        if total == now:
            return True
        log.warning(
            "ignoring the stored %s state of %s: it counted %d producers, now there are %d",
            self._what,
            ssp,
            total,
            now,
        )
        return False


class _EosState:
    __slots__ = ("ended", "tasks", "total")

    def __init__(self, total: int) -> None:
        self.total = total
        self.tasks: set[str] = set()
        self.ended = False


class EndOfStreamStates(_PerPartition[_EosState]):
    """Which of a task's input partitions have ended.

    A partition has ended once end-of-stream arrived from each of its ``producer_counts[ssp]`` producers
    (distinct task names), or once one arrived without a task name (from a source partition, or the
    aggregator's broadcast). A stream has ended when every partition of it this task tracks has.
    """

    _what = "end-of-stream"

    def __init__(self, producer_counts: Mapping[SystemStreamPartition, int]) -> None:
        _check_counts(producer_counts)
        super().__init__({ssp: _EosState(count) for ssp, count in producer_counts.items()})
        self._open = len(self._states)

    def update(self, ssp: SystemStreamPartition, task_name: str | None) -> bool:
        """Count an end-of-stream from ``task_name`` (None: final) on ``ssp``; True when this call ended
        ``ssp`` (it had not ended before). A SamzaError for a partition this task does not track."""
        state = self._state(ssp)
        if state.ended:
            if task_name is not None:
                state.tasks.add(task_name)
            return False
        if task_name is None:
            state.ended = True
        else:
            state.tasks.add(task_name)
            state.ended = len(state.tasks) >= state.total
        if state.ended:
            self._open -= 1
        return state.ended

    def is_end_of_stream(self, ssp: SystemStreamPartition) -> bool:
        """True when ``ssp`` has ended."""
        return self._state(ssp).ended

    def stream_end_of_stream(self, system_stream: SystemStream) -> bool:
        """True when every tracked partition of ``system_stream`` has ended (also when it tracks none)."""
        states = self._states
        return all(states[ssp].ended for ssp in self._streams.get(system_stream, ()))

    def all_end_of_stream(self) -> bool:
        """True when every tracked partition has ended."""
        return self._open == 0

    def producers_seen(self, ssp: SystemStreamPartition) -> tuple[str, ...]:
        """The task names whose end-of-stream arrived on ``ssp``, sorted."""
        return tuple(sorted(self._state(ssp).tasks))

    def state_of(self, ssp: SystemStreamPartition) -> dict[str, Any]:
        """JSON-able bookkeeping of ``ssp``: ``{"tasks": [sorted names], "ended": bool, "total": n}``."""
        state = self._state(ssp)
        return {"tasks": sorted(state.tasks), "ended": state.ended, "total": state.total}

    def restore(self, ssp: SystemStreamPartition, state: Any) -> None:
        """Take back a :meth:`state_of` snapshot of ``ssp``. One taken with another producer count (the
        upstream parallelism changed) is ignored with a warning; a malformed one is a SamzaError naming
        ``ssp``."""
        current = self._state(ssp)
        self._check_stored(ssp, state)
        tasks, ended = state.get("tasks"), state.get("ended")
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
            raise _malformed(ssp, "end-of-stream", state, '"tasks" must be a list of task names')
        if not isinstance(ended, bool):
            raise _malformed(ssp, "end-of-stream", state, '"ended" must be true or false')
        if not self._same_producers(ssp, state):
            return
        was_ended = current.ended
        current.tasks = set(tasks)
        current.ended = ended or len(current.tasks) >= current.total
        self._open += int(was_ended) - int(current.ended)


class _WatermarkState:
    __slots__ = ("created", "quorum_size", "timestamps", "total", "updated", "watermark")

    def __init__(self, total: int, quorum: float, now: float) -> None:
        self.total = total
        self.quorum_size = int(total * quorum)
        self.created = now
        self.timestamps: dict[str, int] = {}
        self.updated: dict[str, float] = {}
        self.watermark: int = WATERMARK_NOT_EXIST


class WatermarkStates(_PerPartition[_WatermarkState]):
    """The watermark of each of a task's input partitions.

    Per partition it keeps the latest watermark of each producer (one going back is ignored); the
    partition's watermark is their minimum once every producer reported (``WATERMARK_NOT_EXIST`` = -1
    before). A watermark without a task name sets it directly (the max of it and the current one).
    Watermarks never go back.

    Idle producers (``idle_timeout_ms`` > 0, Samza's ``task.watermark.idle.timeout.ms``): once that long
    has passed since this object was created, the watermark may be computed before every producer reported,
    provided at least ``int(producers * quorum)`` did; and when the minimum over all producers would not
    advance the watermark, producers that sent nothing for ``idle_timeout_ms`` are left out (again only with
    a quorum of active ones). Producers left out may then deliver late messages. ``now_ms`` is the clock
    (wall-clock ms by default).
    """

    _what = "watermark"

    def __init__(
        self,
        producer_counts: Mapping[SystemStreamPartition, int],
        idle_timeout_ms: int = -1,
        now_ms: Callable[[], float] | None = None,
        quorum: float = DEFAULT_QUORUM,
    ) -> None:
        _check_counts(producer_counts)
        if not 0.0 <= quorum <= 1.0:
            raise SamzaError(f"watermark quorum must be between 0 and 1, got {quorum!r}")
        self._now = now_ms if now_ms is not None else _wall_clock_ms
        self._idle_timeout = idle_timeout_ms
        now = self._now()
        super().__init__({ssp: _WatermarkState(n, quorum, now) for ssp, n in producer_counts.items()})

    def update(self, ssp: SystemStreamPartition, task_name: str | None, timestamp: int) -> bool:
        """Take a watermark ``timestamp`` from ``task_name`` (None: direct) on ``ssp``; True when the
        watermark of ``ssp`` advanced. A SamzaError for a partition this task does not track."""
        state = self._state(ssp)
        before = state.watermark
        if task_name is None:
            if timestamp > before:
                state.watermark = timestamp
            return state.watermark > before
        now = self._now()
        previous = state.timestamps.get(task_name)
        if previous is not None and previous > timestamp:
            log.warning(
                "ignoring watermark %d from %s on %s: it already sent %d", timestamp, task_name, ssp, previous
            )
        else:
            state.timestamps[task_name] = timestamp
            state.updated[task_name] = now
        if self._can_compute(state, now):
            low = min(state.timestamps.values())
            if low <= before and self._idle_timeout > 0:
                low = self._active_minimum(state, now)
            if low > before:
                state.watermark = low
        return state.watermark > before

    def _can_compute(self, state: _WatermarkState, now: float) -> bool:
        reported = len(state.timestamps)
        if reported >= state.total:
            return True
        timeout = self._idle_timeout
        return (
            timeout > 0 and now - state.created >= timeout and reported >= state.quorum_size and reported > 0
        )

    def _active_minimum(self, state: _WatermarkState, now: float) -> int:
        threshold = now - self._idle_timeout
        active = [ts for task, ts in state.timestamps.items() if state.updated[task] > threshold]
        if active and len(active) >= state.quorum_size:
            return min(active)
        return WATERMARK_NOT_EXIST

    def watermark(self, ssp: SystemStreamPartition) -> int:
        """The watermark of ``ssp`` (-1 while unknown)."""
        return self._state(ssp).watermark

    def stream_watermark(self, system_stream: SystemStream) -> int:
        """The minimum watermark over the tracked partitions of ``system_stream`` (-1 when one of them has
        none yet, or when it tracks none)."""
        ssps = self._streams.get(system_stream)
        if not ssps:
            return WATERMARK_NOT_EXIST
        states = self._states
        return min(states[ssp].watermark for ssp in ssps)

    def state_of(self, ssp: SystemStreamPartition) -> dict[str, Any]:
        """JSON-able bookkeeping of ``ssp``: ``{"timestamps": {task: ts}, "watermark": wm, "total": n}``."""
        state = self._state(ssp)
        return {
            "timestamps": dict(sorted(state.timestamps.items())),
            "watermark": state.watermark,
            "total": state.total,
        }

    def restore(self, ssp: SystemStreamPartition, state: Any) -> None:
        """Take back a :meth:`state_of` snapshot of ``ssp`` (restored producers count as active now). One
        taken with another producer count is ignored with a warning; a malformed one is a SamzaError naming
        ``ssp``. The watermark never goes back: the larger of the stored and the current one stays."""
        current = self._state(ssp)
        self._check_stored(ssp, state)
        stamps, watermark = state.get("timestamps"), state.get("watermark")
        if not isinstance(stamps, Mapping) or not all(
            isinstance(task, str) and _is_int(ts) for task, ts in stamps.items()
        ):
            raise _malformed(ssp, "watermark", state, '"timestamps" must map task names to ints')
        if not _is_int(watermark) or watermark < WATERMARK_NOT_EXIST:
            raise _malformed(ssp, "watermark", state, '"watermark" must be an int >= -1')
        if not self._same_producers(ssp, state):
            return
        now = self._now()
        current.timestamps = dict(stamps)
        current.updated = dict.fromkeys(stamps, now)
        current.watermark = max(current.watermark, watermark)


__all__ = ["DEFAULT_QUORUM", "EndOfStreamStates", "WatermarkStates"]
