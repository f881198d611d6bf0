"""Helpers for container tests: a job on a private in-memory namespace, run on the current loop."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from samza_nb import Config, SystemStream
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.container import SamzaContainer
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.observe import EventBus
from samza_nb.observe import events as ev
from samza_nb.observe.bus import PER_MESSAGE_EVENTS, SAMPLED_EVENTS
from samza_nb.observe.events import Committed, Event
from samza_nb.systems.inmemory.system import InMemoryBroker
from samza_nb.testing import LoopMode
from samza_nb.testing.runner import task_factory

OUT = SystemStream("test", "out")

# The events a Job records: all but the per-message ones, whose subscriber would turn the run path off
# (tests that want per-message events run in the observed mode of ``samza_nb.testing.LOOP_MODES``), and
# the sampled messages (a sample is no record).
RECORDED_EVENTS = [
    kind
    for kind in vars(ev).values()
    if isinstance(kind, type)
    and issubclass(kind, Event)
    and kind is not Event
    and kind not in PER_MESSAGE_EVENTS
    and kind not in SAMPLED_EVENTS
]


class Job:
    """A job on system "test" with unbounded inputs the test writes to, and recorded events."""

    def __init__(self, inputs: dict[str, int] | None = None, **config: Any) -> None:
        self.namespace = f"job-{uuid.uuid4().hex}"
        self.broker = InMemoryBroker.named(self.namespace, "test")
        self.inputs = inputs or {"in": 1}
        for stream, partitions in self.inputs.items():
            self.broker.create_stream(stream, partitions)
        self.config: dict[str, Any] = {
            "job.name": "test-job",
            "systems.test.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            "systems.test.inmemory.namespace": self.namespace,
            "systems.test.samza.offset.default": "oldest",
            "task.inputs": ",".join(f"test.{s}" for s in self.inputs),
        }
        self.config.update({k.replace("__", "."): v for k, v in config.items()})
        self.checkpoints = InMemoryCheckpointManager()
        self.events: list[Event] = []

    def send(self, stream: str, values: list[Any], partition: int = 0) -> None:
        for value in values:
            self.broker.send(stream, value, partition=partition)

    def end(self, stream: str | None = None) -> None:
        for name in [stream] if stream else list(self.inputs):
            self.broker.end_stream(name)

    def container(self, task: Any, mode: LoopMode | None = None, **kwargs: Any) -> SamzaContainer:
        """A container of this job running ``task`` (in ``mode``, when given)."""
        bus = EventBus()
        bus.subscribe(self.events.append, RECORDED_EVENTS)
        if mode is not None:
            mode.observe(bus)
        self.checkpoints = InMemoryCheckpointManager(self.checkpoints.checkpoints)
        return SamzaContainer(
            Config(self.config) if mode is None else mode.apply(self.config),
            task_factory(task),
            planner=plan_job_model,
            bus=bus,
            checkpoint_manager=self.checkpoints,
            **kwargs,
        )

    def run(
        self, task: Any, timeout: float = 10.0, mode: LoopMode | None = None, **kwargs: Any
    ) -> SamzaContainer:
        """Run ``task`` (in ``mode``, when given) to the end on a new event loop; the container."""
        container = self.container(task, mode, **kwargs)
        asyncio.run(asyncio.wait_for(container.run(), timeout))
        return container

    def commits(self, task: str | None = None) -> list[dict[str, str]]:
        return [
            {str(ssp): offset for ssp, offset in e.offsets.items()}
            for e in self.events
            if isinstance(e, Committed) and (task is None or e.task == task)
        ]

    def committed_tasks(self) -> list[str]:
        return [e.task for e in self.events if isinstance(e, Committed)]

    def checkpoint(self, task: str = "Partition 0") -> dict[str, str]:
        cp = self.checkpoints.checkpoints.get(task)
        return {} if cp is None else {str(ssp): offset for ssp, offset in cp.offsets.items()}

    def output(self, stream: str = "out") -> dict[int, list[Any]]:
        return self.broker.read(stream)
