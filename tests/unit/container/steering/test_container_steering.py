"""ContainerSteering is an object over a narrow host (SteeringHost), not a mixin of the container."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from samza_nb.api.job_model import JobModel
from samza_nb.api.metadata import SSPMetadata
from samza_nb.api.streams import SystemStreamPartition
from samza_nb.api.task_factory import TaskKind
from samza_nb.config import Config
from samza_nb.container.container import SamzaContainer
from samza_nb.container.loop.collector import TaskCollector
from samza_nb.container.loop.task_instance import TaskInstance
from samza_nb.container.steering.container_steering import ContainerSteering, SteeringHost
from samza_nb.errors import SamzaError
from samza_nb.observe.states import ContainerState


class Old:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        """Nothing."""


class New(Old):
    pass


class Host:
    """Exactly what SteeringHost asks for, and nothing of a container."""

    def __init__(self, config: Config, task_factory: Callable[[], Any]) -> None:
        self.config = config
        self.task_factory = task_factory
        self.container_id = "c7"
        self.state = ContainerState.NEW
        self.tasks: Mapping[str, TaskInstance] = {}

    def collector(self, task_name: str, kind: TaskKind) -> TaskCollector:
        return TaskCollector(task_name, {}, None)


def test_the_steering_acts_on_its_host_before_the_start_through_the_protocol_only() -> None:
    host = Host(Config({"job.name": "j", "task.commit.ms": "1000"}), Old)
    typed: SteeringHost = host
    steering = ContainerSteering(typed)
    steering.pause()
    assert steering.paused
    steering.resume()
    assert not steering.paused
    assert steering.set(task_commit_ms=250)["task.commit.ms"] == "250"
    assert host.config.get_int("task.commit.ms") == 250
    steering.swap(New)
    assert isinstance(host.task_factory(), New)
    with pytest.raises(SamzaError, match="container c7 has not started: step"):
        steering.step()
    host.state = ContainerState.STOPPED
    with pytest.raises(SamzaError, match=r"container c7 has ended \(.*\): it runs no more"):
        steering.resume()


def _never(config: Config, metadata: Mapping[SystemStreamPartition, SSPMetadata], /) -> JobModel:
    raise AssertionError("the container was not run")


def test_the_container_holds_its_steering_and_is_no_steering_itself() -> None:
    container = SamzaContainer(Config({"job.name": "j"}), Old, planner=_never)
    assert isinstance(container.steering, ContainerSteering)
    assert not isinstance(container, ContainerSteering)
    assert SamzaContainer.__mro__ == (SamzaContainer, object)
