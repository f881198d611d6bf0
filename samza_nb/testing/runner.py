"""TestRunner: run a task or a StreamApplication over in-memory inputs to their end and look at outputs,
checkpoints and watermarks."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from samza_nb.api.streams import NO_HEADERS, Headers, SystemStream, SystemStreamPartition
from samza_nb.api.task_factory import task_factory
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.config import Config
from samza_nb.container import event_loop
from samza_nb.container.clock import Clock
from samza_nb.container.container import SamzaContainer
from samza_nb.control.messages import WatermarkMessage
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.errors import JobTimeoutError, SamzaError
from samza_nb.observe.bus import EventBus, Subscriber
from samza_nb.observe.events import Event, WatermarkAdvanced
from samza_nb.operators.application import is_application
from samza_nb.operators.prepare import prepare_application
from samza_nb.runtime.config_check import check_job_config
from samza_nb.systems.inmemory.system import InMemoryBroker
from samza_nb.testing.modes import LoopMode, loop_mode

SYSTEM = "test"
STATE_DIR_KEY = "job.logged.store.base.dir"


@dataclass(frozen=True)
class Message:
    """An input message with an optional key, event timestamp (ms) and headers (``(name, bytes)`` pairs)."""

    value: Any
    key: Any = None
    timestamp: int | None = None
    headers: Headers = NO_HEADERS


@dataclass(frozen=True)
class Watermark:
    """A source watermark in an input list: the partition's messages after it have event times after
    ``timestamp`` (ms). It becomes an envelope of its own (its own offset) whose message is
    ``WatermarkMessage(timestamp=timestamp)``: an application's input operator takes it as the partition's
    watermark; a low-level task gets it as a message like any other."""

    timestamp: int


class TestResult:
    """What a TestRunner run left behind. ``checkpoints`` and ``watermarks`` are keyed by task name
    (``"<job.name>/<task name>"`` when a split application ran several jobs); ``watermarks`` holds, per
    task, the last watermark each input stream reached (only applications have watermarks)."""

    __test__ = False

    def __init__(
        self,
        broker: InMemoryBroker,
        checkpoints: Mapping[str, InMemoryCheckpointManager],
        processed: int,
        watermarks: Mapping[str, Mapping[SystemStream, int]] | None = None,
    ) -> None:
        self._broker = broker
        prefixed = len(checkpoints) > 1
        self.checkpoints: dict[str, dict[SystemStreamPartition, str]] = {
            (f"{job}/{task}" if prefixed else task): dict(cp.offsets)
            for job, manager in checkpoints.items()
            for task, cp in manager.checkpoints.items()
        }
        self.processed = processed
        self.watermarks: dict[str, dict[SystemStream, int]] = {
            task: dict(streams) for task, streams in (watermarks or {}).items()
        }

    def output(self, stream: str) -> dict[int, list[Any]]:
        """``{partition: [message values in order]}`` of a stream on the test system."""
        return self._broker.read(stream)


class TestRunner:
    """Builds and runs a one-container job on the in-memory system "test" (modelled on Samza's): of a task,
    or of a StreamApplication (its stream ids, intermediate streams included, live on "test"; a split
    application runs one container per stage's job, all at once).

    Stores live in a temporary directory of this runner (kept while it exists) unless
    ``job.logged.store.base.dir`` is configured; checkpoints are in memory. Running a runner again resumes
    from both.

    A runner may run in a :class:`~samza_nb.testing.modes.LoopMode`, one of the ways the run loop executes
    a task (``TestRunner.of(task, mode=...)`` or ``.in_mode(...)``); to check a task in each of them::

        @pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
        def test_counts(mode):
            result = TestRunner.of(WordCount, mode=mode).add_input("lines", ["a b a"]).run()
            assert result.checkpoints == ...

    The mode's config keys are defaults (``add_config`` wins); an observed mode subscribes to every event
    of each container the runner builds. Without a mode the runner adds nothing."""

    __test__ = False

    def __init__(self, task: Any, mode: LoopMode | str | None = None) -> None:
        self._app: Any = task if is_application(task) else None
        self._factory = None if self._app is not None else task_factory(task)
        self._namespace = f"testrunner-{uuid.uuid4().hex}"
        self._broker = InMemoryBroker.named(self._namespace, SYSTEM)
        self._inputs: list[str] = []
        self._outputs: list[str] = []
        self._config: dict[str, Any] = {}
        self._clock: Clock | None = None
        self._subscribers: list[tuple[Subscriber, Iterable[type[Event]] | None, bool]] = []
        self._checkpoints: dict[str, InMemoryCheckpointManager] = {}
        self._state_dir: str | None = None  # removed when the runner is collected
        self._mode: LoopMode | None = None
        if mode is not None:
            self.in_mode(mode)

    @classmethod
    def of(cls, task: Any, mode: LoopMode | str | None = None) -> TestRunner:
        """A runner for a task class, a zero-argument factory, a task instance, or a StreamApplication
        (class or instance); with ``mode``, running in it (see :meth:`in_mode`)."""
        return cls(task, mode)

    def in_mode(self, mode: LoopMode | str) -> TestRunner:
        """Run in ``mode``: a :class:`LoopMode` (e.g. one of ``LOOP_MODES``) or the name of one of
        ``LOOP_MODES``. Its config keys go under the runner's own (``add_config`` wins); when it is
        observed, every container gets a subscriber of every event. An application refuses a mode with
        ``max_concurrency`` above 1 (a ConfigError naming ``task.max.concurrency``)."""
        self._mode = loop_mode(mode)
        return self

    @property
    def mode(self) -> LoopMode | None:
        """The mode this runner runs in (None: the runner adds nothing)."""
        return self._mode

    def add_input(self, stream: str, messages: list[Any] | Mapping[int, list[Any]]) -> TestRunner:
        """A bounded input (for an application: its stream id): a list is partition 0; a dict maps
        partition → items. An item is a plain value, a :class:`Message`, or a :class:`Watermark`. Each
        partition ends with end-of-stream."""
        if isinstance(messages, Mapping):
            if not messages:
                raise SamzaError(f"input {stream!r}: give at least one partition")
            bad = [p for p in messages if not isinstance(p, int) or p < 0]
            if bad:
                raise SamzaError(f"input {stream!r}: partitions must be integers >= 0, got {bad!r}")
            partitions = dict(messages)
        else:
            partitions = {0: list(messages)}
        broker = self._broker
        broker.ensure_stream(stream, max(partitions) + 1)
        for partition, items in partitions.items():
            for item in items:
                if isinstance(item, Message):
                    broker.send(
                        stream,
                        item.value,
                        key=item.key,
                        partition=partition,
                        timestamp=item.timestamp,
                        headers=item.headers,
                    )
                elif isinstance(item, Watermark):
                    broker.send(stream, WatermarkMessage(timestamp=item.timestamp), partition=partition)
                else:
                    broker.send(stream, item, partition=partition)
        broker.end_stream(stream)
        self._inputs.append(stream)
        return self

    def add_output(self, stream: str, partitions: int = 1) -> TestRunner:
        """An output stream (for an application: its stream id) on the test system with ``partitions``
        partitions."""
        self._broker.ensure_stream(stream, partitions)
        self._outputs.append(stream)
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
        """The job config this runner uses (for an application, before the planner adds its plan)."""
        if not self._inputs:
            raise SamzaError("TestRunner needs at least one input: call add_input(stream, messages)")
        base: dict[str, Any] = {
            "job.name": "test-job",
            f"systems.{SYSTEM}.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            f"systems.{SYSTEM}.inmemory.namespace": self._namespace,
            f"systems.{SYSTEM}.samza.offset.default": "oldest",
        }
        if self._app is None:
            base["task.inputs"] = ",".join(f"{SYSTEM}.{s}" for s in self._inputs)
        else:
            base["job.default.system"] = SYSTEM
            for stream in dict.fromkeys([*self._inputs, *self._outputs]):
                base[f"streams.{stream}.samza.system"] = SYSTEM
        if STATE_DIR_KEY not in self._config:
            if self._state_dir is None:
                self._state_dir = tempfile.mkdtemp(prefix="samza-nb-testrunner-")
                weakref.finalize(self, shutil.rmtree, self._state_dir, ignore_errors=True)
            base[STATE_DIR_KEY] = self._state_dir
        if self._mode is not None:
            base.update(self._mode.config())
        base.update(self._config)
        return Config(base)

    async def run_async(self, timeout: float = 30.0) -> TestResult:
        """Run on the current event loop until every input ended and tasks finished, or the tasks asked
        to stop; raises SamzaError on task failure and JobTimeoutError after ``timeout`` seconds."""
        config = self.config()
        check_job_config(config)  # a misspelt key, class path or serde name: before anything runs
        InMemoryBroker.register(self._broker)
        try:
            if self._app is not None:
                prepared = await prepare_application(self._app, config)
                jobs, factory = prepared.jobs, prepared.task_factory
            else:
                assert self._factory is not None
                jobs, factory = (config,), self._factory
            watermarks: dict[str, dict[SystemStream, int]] = {}
            containers = [self._container(job, factory, watermarks, len(jobs) > 1) for job in jobs]
            await _run_all(containers, timeout)
        finally:
            # The result keeps the broker; the registry must not (a notebook runs many tests).
            InMemoryBroker.drop(self._namespace)
        processed = sum(c.processed for c in containers)
        return TestResult(self._broker, self._checkpoints, processed, watermarks)

    def _container(
        self, config: Config, factory: Any, watermarks: dict[str, dict[SystemStream, int]], prefixed: bool
    ) -> SamzaContainer:
        job = config.job_name()
        bus = EventBus()
        for subscriber, events, sampled in self._subscribers:
            bus.subscribe(subscriber, events, sampled=sampled)
        if self._mode is not None:
            self._mode.observe(bus)
        if self._app is not None:

            def record(event: Event) -> None:
                assert isinstance(event, WatermarkAdvanced)
                task = f"{job}/{event.task}" if prefixed else event.task
                watermarks.setdefault(task, {})[event.system_stream] = event.watermark

            bus.subscribe(record, [WatermarkAdvanced])
        checkpoints = self._checkpoints.setdefault(job, InMemoryCheckpointManager())
        return SamzaContainer(
            config,
            factory,
            planner=plan_job_model,
            clock=self._clock,
            bus=bus,
            checkpoint_manager=checkpoints,
        )

    def run(self, timeout: float = 30.0) -> TestResult:
        """Run to the end (see :meth:`run_async`). Inside a running event loop (a notebook) the job runs
        on its own thread and loop, and this call blocks until it is done."""
        return event_loop.run_blocking(self.run_async(timeout))


async def _run_all(containers: Sequence[SamzaContainer], timeout: float) -> None:
    """Run ``containers`` at once until all stopped; the first failure stops the others and is raised;
    after ``timeout`` seconds every container is stopped and JobTimeoutError raised."""
    runs = [asyncio.ensure_future(c.run()) for c in containers]
    done, pending = await asyncio.wait(runs, timeout=timeout, return_when=asyncio.FIRST_EXCEPTION)
    failed = next((r for r in done if not r.cancelled() and r.exception() is not None), None)
    # A run cancelled though nobody here cancelled it (task code that cancelled the Task it ran on, at its
    # start or init) did not finish: never a success.
    lost = next((c for c, r in zip(containers, runs, strict=True) if r in done and r.cancelled()), None)
    if failed is None and lost is None and not pending:
        return
    for container in containers:
        container.shutdown()
    if pending:
        _, stuck = await asyncio.wait(pending, timeout=5.0)
        for run in stuck:
            run.cancel()
    for run in runs:  # retrieved, so none is reported as never retrieved
        if run.done() and not run.cancelled():
            run.exception()
    if failed is not None:
        failed.result()
    processed = sum(c.processed for c in containers)
    if lost is not None:
        raise SamzaError(
            f"container {lost.container_id} was cancelled before it finished ({processed} messages "
            "processed): code it ran cancelled its asyncio Task (asyncio.current_task().cancel() in an init?)"
        )
    raise JobTimeoutError(f"job did not finish within {timeout} s ({processed} messages processed)")


__all__ = ["Message", "TestResult", "TestRunner", "Watermark", "task_factory"]
