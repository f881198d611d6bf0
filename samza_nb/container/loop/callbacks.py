"""Task callbacks and their sequencing: completions are released in creation order (the low watermark)."""

from __future__ import annotations

import heapq
import threading
from typing import TYPE_CHECKING, Protocol

from samza_nb import crash_points
from samza_nb.errors import CallbackError

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.container.loop.coordination import ReadableCoordinator

_PENDING, _COMPLETED, _FAILED = 0, 1, 2


class CallbackListener(Protocol):
    """Told (from any thread) when a callback completes or fails."""

    def on_complete(self, callback: TaskCallbackImpl) -> None:
        """``callback`` completed for the first time."""
        ...

    def on_failure(self, callback: TaskCallbackImpl, error: BaseException) -> None:
        """``callback`` failed, timed out, or was completed/failed a second time."""
        ...


class TaskCallbackImpl:
    """The callback of one message: ``complete()`` or ``failure(exc)``, once, from any thread.

    A second call of either is reported to the listener as a :class:`CallbackError` (which fails the
    container). Ordered by sequence number.
    """

    __slots__ = (
        "_listener",
        "_lock",
        "_state",
        "coordinator",
        "offset",
        "seq",
        "ssp",
        "started_ms",
        "task_name",
    )

    def __init__(
        self,
        listener: CallbackListener,
        lock: threading.Lock,
        task_name: str,
        ssp: SystemStreamPartition,
        offset: str,
        seq: int,
        coordinator: ReadableCoordinator,
        started_ms: float = 0.0,
    ) -> None:
        self._listener = listener
        self._lock = lock
        self._state = _PENDING
        self.task_name = task_name
        self.ssp = ssp
        self.offset = offset
        self.seq = seq
        self.coordinator = coordinator
        self.started_ms = started_ms  # the container clock's time the message started (its age)

    @property
    def is_done(self) -> bool:
        """True once completed or failed."""
        return self._state != _PENDING

    def complete(self) -> None:
        """The message is fully processed."""
        with self._lock:
            state = self._state
            if state == _PENDING:
                self._state = _COMPLETED
        if state == _PENDING:
            self._listener.on_complete(self)
            if crash_points.ARMED:
                crash_points.reached("callbacks.completed")
        else:
            self._listener.on_failure(
                self,
                CallbackError(
                    f"callback of task {self.task_name!r} for {self.ssp} offset {self.offset} was completed "
                    f"after it had already {'completed' if state == _COMPLETED else 'failed or timed out'}"
                ),
            )

    def failure(self, error: BaseException) -> None:
        """Processing of the message failed with ``error``."""
        with self._lock:
            state = self._state
            if state == _PENDING:
                self._state = _FAILED
        if state == _PENDING:
            self._listener.on_failure(self, error)
        else:
            doubled = CallbackError(
                f"callback of task {self.task_name!r} for {self.ssp} offset {self.offset} was failed "
                f"after it had already {'completed' if state == _COMPLETED else 'failed or timed out'}"
            )
            doubled.__cause__ = error
            self._listener.on_failure(self, doubled)

    def __lt__(self, other: TaskCallbackImpl) -> bool:
        return self.seq < other.seq

    def __repr__(self) -> str:
        return f"TaskCallbackImpl({self.task_name!r}, {self.ssp}, offset={self.offset!r}, seq={self.seq})"


class TaskCallbackManager:
    """Numbers a task's callbacks (0, 1, …) and releases completed ones strictly in that order.

    A completed callback waits until every earlier one completed. A release run stops after a callback
    that carries a commit request; the rest are released by :meth:`release_more` once the commit ran.
    """

    __slots__ = ("_completed", "_next_release", "next_seq")

    def __init__(self) -> None:
        self.next_seq = 0
        self._next_release = 0
        self._completed: list[TaskCallbackImpl] = []

    def take_seq(self) -> int:
        """The sequence number of the next callback."""
        seq = self.next_seq
        self.next_seq = seq + 1
        return seq

    def update(self, callback: TaskCallbackImpl) -> list[TaskCallbackImpl]:
        """Record a completion; returns the callbacks now released, in sequence order."""
        if callback.seq == self._next_release and not self._completed:  # the next one, none waiting
            self._next_release += 1
            return [callback]
        heapq.heappush(self._completed, callback)
        return self.release_more()

    def release_more(self) -> list[TaskCallbackImpl]:
        """Release the contiguous run of completed callbacks at the head, cut after a commit request."""
        released: list[TaskCallbackImpl] = []
        heap = self._completed
        while heap and heap[0].seq == self._next_release:
            callback = heapq.heappop(heap)
            self._next_release += 1
            released.append(callback)
            if callback.coordinator.commit_request is not None:
                break
        return released

    @property
    def waiting(self) -> int:
        """Completed callbacks not yet released."""
        return len(self._completed)
