"""Commits slower than ``task.commit.ms``: the commit timer fires while a commit is in flight. Messages still
flow between commits (a timer firing during a commit used to queue the next one at once, so the messages
parked behind commits forever), and the container ends once every task is done (a timer firing during a
task's final commit used to leave the done task with a commit request the loop no longer serves, and the
container's stop waited for it forever)."""

from __future__ import annotations

import asyncio
from typing import Any

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream
from samza_nb.systems.inmemory.system import InMemorySystemFactory, InMemorySystemProducer
from samza_nb.testing import TestRunner

FLUSH_S = 0.03
"""How long each flush of the slow system takes: many commit timer periods (``task.commit.ms`` = 1)."""


class SlowFlushProducer(InMemorySystemProducer):
    """The in-memory producer, whose flush takes ``FLUSH_S`` (a sink that writes and fsyncs files)."""

    async def flush(self, source: str) -> None:
        await asyncio.sleep(FLUSH_S)  # the slow write, not a synchronisation
        await super().flush(source)


class SlowFlushFactory(InMemorySystemFactory):
    """``systems.<s>.samza.factory`` of an in-memory system whose producer flushes slowly."""

    def get_producer(self, system_name: str, config: Config) -> SlowFlushProducer:
        return SlowFlushProducer(self.broker(system_name, config), config, system_name)


class Forward:
    """Sends each message to ``slow.out``."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(SystemStream("slow", "out"), envelope.message))


def test_a_commit_timer_during_the_final_commit_does_not_keep_the_container_running() -> None:
    for partitions in (1, 2):
        result = (
            TestRunner.of(Forward)
            .add_input("in", {p: list(range(50)) for p in range(partitions)})
            .add_config(
                {
                    "task.commit.ms": "1",
                    "systems.slow.samza.factory": f"{__name__}.SlowFlushFactory",
                }
            )
            .run(timeout=20)
        )
        assert set(result.checkpoints) == {f"Partition {p}" for p in range(partitions)}
