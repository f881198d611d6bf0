"""What users implement (the task protocols) and what the container hands them while they run.

Subclassing the protocols is optional: the container recognises a task by the methods it has.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from samza_nb.api.config_mapping import ConfigMapping
    from samza_nb.api.streams import (
        IncomingMessageEnvelope,
        OutgoingMessageEnvelope,
        SystemStream,
        SystemStreamPartition,
    )
    from samza_nb.observe.events import Event


class RequestScope(enum.Enum):
    """Who a commit or shutdown request applies to."""

    CURRENT_TASK = "current_task"
    ALL_TASKS_IN_CONTAINER = "all_tasks_in_container"


@runtime_checkable
class MessageCollector(Protocol):
    """Sends output messages. Safe to call from any thread until the message's callback completes."""

    def send(self, envelope: OutgoingMessageEnvelope) -> None:
        """Send ``envelope`` to its stream; delivery is flushed at the latest by the next commit."""
        ...

    def send_to(self, stream: SystemStream, message: Any, key: Any = None) -> None:
        """The same as ``send(OutgoingMessageEnvelope(stream, message, key=key))``, cheaper: a task on the
        container's loop thread that sends messages without a key pays no envelope for them (about a
        third of the cost of sending a message). For a partition, partition key, timestamp or headers,
        build the envelope."""
        ...


@runtime_checkable
class TaskCoordinator(Protocol):
    """Lets a task ask for a commit or a shutdown from inside process, window or end-of-stream."""

    def commit(self, scope: RequestScope) -> None:
        """Commit once the current message is released (CURRENT_TASK) or commit every task (ALL_TASKS)."""
        ...

    def shutdown(self, scope: RequestScope) -> None:
        """Vote to stop (CURRENT_TASK: the container stops when every task voted) or stop now (ALL_TASKS)."""
        ...


@runtime_checkable
class TaskCallback(Protocol):
    """Completion handle of one asynchronously processed message; callable from any thread, once."""

    def complete(self) -> None:
        """The message is fully processed."""
        ...

    def failure(self, error: BaseException) -> None:
        """Processing failed: the container stops with a TaskFailedError."""
        ...


@runtime_checkable
class StreamTask(Protocol):
    """A synchronous task: ``process`` runs once per message, in the order the chooser picks them.

    ``process`` may also be ``async def``: completion is then the coroutine returning.
    """

    def process(
        self, envelope: IncomingMessageEnvelope, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> Awaitable[None] | None:
        """Process one message."""
        ...


@runtime_checkable
class AsyncStreamTask(Protocol):
    """A callback task: the message counts as processed when ``callback.complete()`` is called."""

    def process_async(
        self,
        envelope: IncomingMessageEnvelope,
        collector: MessageCollector,
        coordinator: TaskCoordinator,
        callback: TaskCallback,
    ) -> None:
        """Start processing one message; complete or fail ``callback`` later, from any thread."""
        ...


@runtime_checkable
class WindowableTask(Protocol):
    """A task called every ``task.window.ms`` while no message of it is in flight."""

    def window(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        """Called on the window timer, after every earlier message of the task completed."""
        ...


@runtime_checkable
class InitableTask(Protocol):
    """A task initialised once, before its first message."""

    def init(self, context: TaskContext) -> None:
        """Called once before any process, with the task's context (stores, config, partitions)."""
        ...


@runtime_checkable
class ClosableTask(Protocol):
    """A task told when the container stops."""

    def close(self) -> None:
        """Called once after the task's last commit, when the container stops."""
        ...


@runtime_checkable
class EndOfStreamListenerTask(Protocol):
    """A task told when every one of its input partitions has ended."""

    def on_end_of_stream(self, collector: MessageCollector, coordinator: TaskCoordinator) -> None:
        """Called once, after every message of the task has completed, before its final commit."""
        ...


@runtime_checkable
class PartitionEndListenerTask(Protocol):
    """Optional capability: a task told of each input partition's end-of-stream as it is taken (the
    high-level API's operator task propagates end-of-stream downstream from it). Called on the loop thread
    when nothing of the task is in flight, before the container counts the partition as ended; the task's
    ``on_end_of_stream`` still follows once every partition ended."""

    def on_partition_end(
        self, ssp: SystemStreamPartition, collector: MessageCollector, coordinator: TaskCoordinator
    ) -> None:
        """``ssp`` reached end-of-stream: no more messages of it will be processed."""
        ...


class TaskContext:
    """What a task knows about itself: its name, partitions, config, stores and metrics; ``publish``
    puts an observe event on the container's bus (a no-op when nobody listens) and ``now_ms`` reads the
    container's clock."""

    def __init__(
        self,
        task_name: str,
        ssps: frozenset[SystemStreamPartition],
        config: ConfigMapping,
        stores: Mapping[str, Any] | None = None,
        metrics: dict[str, Any] | None = None,
        *,
        publish: Callable[[Event], None] | None = None,
        now_ms: Callable[[], float] | None = None,
    ) -> None:
        self.task_name = task_name
        self.ssps = ssps
        self.config = config
        self._stores: Mapping[str, Any] = stores if stores is not None else {}
        self.metrics: dict[str, Any] = metrics if metrics is not None else {}
        self.publish: Callable[[Event], None] = publish if publish is not None else _ignore
        self.now_ms: Callable[[], float] = now_ms if now_ms is not None else _wall_clock_ms

    def get_store(self, name: str) -> Any:
        """The task's key-value store ``name`` (configured by ``stores.<name>.factory``)."""
        try:
            return self._stores[name]
        except KeyError:
            from samza_nb.errors import SamzaError

            known = ", ".join(sorted(self._stores)) or "none"
            raise SamzaError(
                f"task {self.task_name!r} has no store {name!r} (configured stores: {known}); "
                f"configure it with stores.{name}.factory"
            ) from None

    def __repr__(self) -> str:
        return f"TaskContext({self.task_name!r}, ssps={sorted(self.ssps)!r})"


def _ignore(event: Event) -> None:
    """Nobody listens."""


def _wall_clock_ms() -> float:
    import time

    return time.time() * 1000.0
