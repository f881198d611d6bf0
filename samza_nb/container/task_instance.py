"""One task instance: the user's task object for a task name, with the run loop's per-task state."""

from __future__ import annotations

import enum
import inspect
from collections import deque
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from samza_nb.container.callbacks import TaskCallbackManager
from samza_nb.container.coordination import ReadableCoordinator
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.api.task import MessageCollector


class TaskKind(enum.Enum):
    """How a task processes a message."""

    SYNC = "sync"  # process() returns when done
    CALLBACK = "callback"  # process_async(..., callback)
    COROUTINE = "coroutine"  # async def process()


def task_kind(task: Any) -> TaskKind:
    """The kind of ``task``; a SamzaError naming its class when it has neither process nor process_async."""
    if callable(getattr(task, "process_async", None)):
        return TaskKind.CALLBACK
    process = getattr(task, "process", None)
    if not callable(process):
        raise SamzaError(
            f"{type(task).__qualname__} is not a task: it needs process(envelope, collector, coordinator) "
            f"or process_async(envelope, collector, coordinator, callback)"
        )
    if inspect.iscoroutinefunction(process):
        return TaskKind.COROUTINE
    return TaskKind.SYNC


class TaskInstance:
    """A task name's task object and the state the run loop keeps for it (DESIGN §4.2)."""

    def __init__(
        self,
        name: str,
        task: Any,
        ssps: frozenset[SystemStreamPartition],
        collector: MessageCollector,
        starting_offsets: Mapping[SystemStreamPartition, str],
        comparators: Mapping[SystemStreamPartition, Callable[[str, str], int]],
        last_processed: Mapping[SystemStreamPartition, str],
        max_concurrency: int,
        window_enabled: bool,
        inline: bool = True,
    ) -> None:
        self.name = name
        self.task = task
        self.ssps = ssps
        self.collector = collector
        self.kind = task_kind(task)
        # Sync tasks without a thread pool complete when process() returns: the run loop's fast path.
        self.inline = inline and self.kind is TaskKind.SYNC
        self.process: Callable[..., Any] = getattr(task, "process", None) or task.process_async
        self.max_concurrency = max_concurrency
        self.windowable = window_enabled and callable(getattr(task, "window", None))
        self.starting_offsets = dict(starting_offsets)
        self.comparators = comparators
        # SSPs whose messages may still be older than the starting offset (checked until one is not).
        self.check_start: set[SystemStreamPartition] = set(ssps)
        # Low watermark: the last released offset per SSP; starts at the checkpoint.
        self.last_offsets: dict[SystemStreamPartition, str] = dict(last_processed)
        self.committed_offsets: dict[SystemStreamPartition, str] = dict(last_processed)
        self.callbacks = TaskCallbackManager()
        self.coordinator = ReadableCoordinator(name)  # reused by inline sync calls
        self.pending: deque[IncomingMessageEnvelope] = deque()
        self.open_ssps: set[SystemStreamPartition] = set(ssps)
        self.in_flight = 0
        self.need_window = False
        self.need_commit = False
        self.window_in_flight = False
        self.commit_in_flight = False
        self.end_of_stream = not ssps
        self.eos_ran = False
        self.done = False
        self.open = True  # may a new message start now? kept current by the run loop
        self.processed = 0

    # -- lifecycle hooks -----------------------------------------------------------------------------------
    def init(self, context: Any) -> None:
        """Call the task's ``init(context)`` if it has one."""
        init = getattr(self.task, "init", None)
        if callable(init):
            init(context)

    def close(self) -> None:
        """Call the task's ``close()`` if it has one."""
        close = getattr(self.task, "close", None)
        if callable(close):
            close()

    @property
    def has_end_of_stream_listener(self) -> bool:
        """True when the task implements ``on_end_of_stream``."""
        return callable(getattr(self.task, "on_end_of_stream", None))

    def is_before_start(self, envelope: IncomingMessageEnvelope) -> bool:
        """True when ``envelope`` is older than its partition's starting offset (it is skipped)."""
        ssp = envelope.ssp
        start = self.starting_offsets.get(ssp)
        if start is not None and self.comparators[ssp](envelope.offset, start) < 0:
            return True
        self.check_start.discard(ssp)
        return False

    def __repr__(self) -> str:
        return f"TaskInstance({self.name!r}, kind={self.kind.value}, in_flight={self.in_flight})"
