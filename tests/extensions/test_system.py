"""The sequence system plug-in, loaded through systems.<name>.samza.factory in a real job."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb import ConfigError, SamzaError, SystemStreamPartition
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.config import Config
from samza_nb.container import event_loop
from samza_nb.container.container import SamzaContainer
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.systems.base import SystemFactory


class Sum:
    total = 0
    seen = 0

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Sum.total += envelope.message
        Sum.seen += 1


def config(count: int = 1000, partitions: int = 2) -> Config:
    return Config(
        {
            "job.name": "sequence",
            "task.inputs": "numbers.ints",
            "systems.numbers.samza.factory": "samza_nb_ext.system.SequenceSystemFactory",
            "systems.numbers.samza.offset.default": "oldest",
            "systems.numbers.streams.ints.count": str(count),
            "systems.numbers.streams.ints.partitions": str(partitions),
        }
    )


def run(cfg: Config, manager: InMemoryCheckpointManager, max_messages: int | None = None) -> SamzaContainer:
    container = SamzaContainer(
        cfg, Sum, planner=plan_job_model, checkpoint_manager=manager, max_messages=max_messages
    )
    event_loop.run(container.run())
    return container


def test_a_job_reads_every_generated_message_to_end_of_stream() -> None:
    Sum.total = Sum.seen = 0
    manager = InMemoryCheckpointManager()
    container = run(config(), manager)
    assert (Sum.seen, Sum.total) == (2000, sum(range(2000)))
    assert container.processed == 2000
    offsets = {task: dict(cp.offsets) for task, cp in manager.checkpoints.items()}
    assert offsets == {
        "Partition 0": {SystemStreamPartition("numbers", "ints", 0): "999"},
        "Partition 1": {SystemStreamPartition("numbers", "ints", 1): "999"},
    }


def test_a_restart_resumes_after_the_checkpoint() -> None:
    Sum.total = Sum.seen = 0
    manager = InMemoryCheckpointManager()
    first = run(config(), manager, max_messages=700)
    second = run(config(), manager)
    assert first.processed + second.processed == 2000
    assert (Sum.seen, Sum.total) == (2000, sum(range(2000)))


def test_it_is_a_system_factory_and_misconfiguration_names_the_key() -> None:
    from samza_nb_ext.system import SequenceSystemFactory

    assert isinstance(SequenceSystemFactory(), SystemFactory)
    bad = Config({**config(), "systems.numbers.streams.ints.count": "many"})
    with pytest.raises(ConfigError, match=r"systems\.numbers\.streams\.ints\.count='many'"):
        run(bad, InMemoryCheckpointManager())


def test_sending_to_it_is_refused() -> None:
    from samza_nb import OutgoingMessageEnvelope, SystemStream

    class Echo:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            collector.send(OutgoingMessageEnvelope(SystemStream("numbers", "ints"), 1))

    container = SamzaContainer(
        config(count=1, partitions=1),
        Echo,
        planner=plan_job_model,
        checkpoint_manager=InMemoryCheckpointManager(),
    )
    with pytest.raises(SamzaError, match="input-only"):
        event_loop.run(container.run())
