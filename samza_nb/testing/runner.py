"""TestRunner: run a task over in-memory inputs to their end and look at outputs and checkpoints."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.api.task_factory import task_factory
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.config import Config
from samza_nb.container import event_loop
from samza_nb.container.clock import Clock
from samza_nb.container.container import SamzaContainer
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.errors import JobTimeoutError, SamzaError
from samza_nb.observe.bus import EventBus, Subscriber
from samza_nb.observe.events import Event
from samza_nb.systems.inmemory import InMemoryBroker

SYSTEM = "test"


@dataclass(frozen=True)
class Message:
    """An input message with an optional key and event timestamp (ms)."""

    value: Any
    key: Any = None
    timestamp: int | None = None


class TestResult:
    """What a TestRunner run left behind."""

    __test__ = False

    def __init__(
        self, broker: InMemoryBroker, checkpoints: InMemoryCheckpointManager, processed: int
    ) -> None:
        self._broker = broker
        self.checkpoints: dict[str, dict[SystemStreamPartition, str]] = {
            task: dict(cp.offsets) for task, cp in checkpoints.checkpoints.items()
        }
        self.processed = processed

    def output(self, stream: str) -> dict[int, list[Any]]:
        """``{partition: [message values in order]}`` of a stream on the test system."""
        return self._broker.read(stream)


class TestRunner:
    """Builds and runs a one-container job on the in-memory system "test" (modelled on Samza's)."""

    __test__ = False

    def __init__(self, task: Any) -> None:
        self._factory = task_factory(task)
        self._namespace = f"testrunner-{uuid.uuid4().hex}"
        self._broker = InMemoryBroker.named(self._namespace, SYSTEM)
        self._inputs: list[str] = []
        self._config: dict[str, Any] = {}
        self._clock: Clock | None = None
        self._subscribers: list[tuple[Subscriber, Iterable[type[Event]] | None, bool]] = []
        self._checkpoints = InMemoryCheckpointManager()

    @classmethod
    def of(cls, task: Any) -> TestRunner:
        """A runner for a task class, a zero-argument factory or a task instance."""
        return cls(task)

    def add_input(self, stream: str, messages: list[Any] | Mapping[int, list[Any]]) -> TestRunner:
        """A bounded input: a list is partition 0; a dict maps partition → messages (plain values or
        :class:`Message`). Each partition ends with end-of-stream."""
        if isinstance(messages, Mapping):
            if not messages:
                raise SamzaError(f"input {stream!r}: give at least one partition")
            bad = [p for p in messages if not isinstance(p, int) or p < 0]
            if bad:
                raise SamzaError(f"input {stream!r}: partitions must be integers >= 0, got {bad!r}")
            partitions = dict(messages)
        else:
            partitions = {0: list(messages)}
        self._broker.create_stream(stream, max(partitions) + 1)
        for partition, items in partitions.items():
            for item in items:
                if isinstance(item, Message):
                    self._broker.send(
                        stream, item.value, key=item.key, partition=partition, timestamp=item.timestamp
                    )
                else:
                    self._broker.send(stream, item, partition=partition)
        self._broker.end_stream(stream)
        self._inputs.append(stream)
        return self

    def add_output(self, stream: str, partitions: int = 1) -> TestRunner:
        """An output stream on the test system with ``partitions`` partitions."""
        self._broker.create_stream(stream, partitions)
        return self

    def add_config(self, config: Mapping[str, Any]) -> TestRunner:
        """Config on top of the runner's defaults."""
        self._config.update(config)
        return self

    def with_clock(self, clock: Clock) -> TestRunner:
        """Use ``clock`` (e.g. ``FakeClock()``) for the container's timers."""
        self._clock = clock
        return self

    def subscribe(
        self, subscriber: Subscriber, events: Iterable[type[Event]] | None = None, *, sampled: bool = False
    ) -> TestRunner:
        """Receive the container's observe events (only those types, when ``events`` is given; only a
        sample of the per-message ones, when ``sampled``)."""
        self._subscribers.append((subscriber, events, sampled))
        return self

    @property
    def broker(self) -> InMemoryBroker:
        """The in-memory broker behind the "test" system."""
        return self._broker

    def config(self) -> Config:
        """The job config this runner uses."""
        if not self._inputs:
            raise SamzaError("TestRunner needs at least one input: call add_input(stream, messages)")
        base: dict[str, Any] = {
            "job.name": "test-job",
            f"systems.{SYSTEM}.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            f"systems.{SYSTEM}.inmemory.namespace": self._namespace,
            f"systems.{SYSTEM}.samza.offset.default": "oldest",
            "task.inputs": ",".join(f"{SYSTEM}.{s}" for s in self._inputs),
        }
        base.update(self._config)
        return Config(base)

    async def run_async(self, timeout: float = 30.0) -> TestResult:
        """Run on the current event loop until every input ended and tasks finished, or a task asked
        to stop; raises SamzaError on task failure and JobTimeoutError after ``timeout`` seconds."""
        bus = EventBus()
        for subscriber, events, sampled in self._subscribers:
            bus.subscribe(subscriber, events, sampled=sampled)
        container = SamzaContainer(
            self.config(),
            self._factory,
            planner=plan_job_model,
            clock=self._clock,
            bus=bus,
            checkpoint_manager=self._checkpoints,
        )
        InMemoryBroker.register(self._broker)
        runner = asyncio.ensure_future(container.run())
        try:
            await asyncio.wait_for(asyncio.shield(runner), timeout)
        except TimeoutError:
            container.shutdown()
            try:
                await asyncio.wait_for(runner, 5.0)
            except BaseException:
                runner.cancel()
            raise JobTimeoutError(
                f"job did not finish within {timeout} s ({container.processed} messages processed)"
            ) from None
        finally:
            # The result keeps the broker; the registry must not (a notebook runs many tests).
            InMemoryBroker.drop(self._namespace)
        return TestResult(self._broker, self._checkpoints, container.processed)

    def run(self, timeout: float = 30.0) -> TestResult:
        """Run to the end (see :meth:`run_async`). Inside a running event loop (a notebook) the job runs
        on its own thread and loop, and this call blocks until it is done."""
        return event_loop.run_blocking(self.run_async(timeout))
