"""The coordinator stream as the job coordinator uses it: the store it reads and writes (a Protocol, and the
real one by default) and the messages that bring the stream from what it holds to a submitted config and job
model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from samza_nb.api.job_model import JobModel
from samza_nb.config import Config
from samza_nb.coordinator.driver_claim import DriverClaim
from samza_nb.coordinator.messages import CoordinatorStreamMessage
from samza_nb.coordinator.stream_store import CoordinatorStreamStore

SOURCE = "job-coordinator"
"""The ``source`` of the messages the job coordinator writes."""


class CoordinatorStore(Protocol):
    """The coordinator stream as the job coordinator uses it (CoordinatorStreamStore is the real one)."""

    async def start(self) -> None:
        """Create the stream if missing and read it to its end."""
        ...

    async def catch_up(self) -> None:
        """Read what was written since."""
        ...

    def config(self) -> dict[str, str]:
        """The bootstrapped set-config view."""
        ...

    def changelog_mapping(self) -> dict[str, int]:
        """Task -> changelog partition."""
        ...

    def container_hosts(self) -> dict[str, str]:
        """Container id -> host."""
        ...

    def task_containers(self) -> dict[str, str]:
        """Task -> container id."""
        ...

    def driver(self) -> DriverClaim | None:
        """The driver's claim on the job in force (:mod:`samza_nb.coordinator.driver_claim`)."""
        ...

    async def send(self, messages: Sequence[CoordinatorStreamMessage]) -> None:
        """Append ``messages``; durable when it returns."""
        ...

    async def stop(self) -> None:
        """Release the stream."""
        ...


def default_store(config: Config) -> CoordinatorStore:
    """The job's coordinator stream on its coordinator system."""
    return CoordinatorStreamStore(config)


def stream_changes(
    config: Config,
    previous_config: Mapping[str, str],
    previous_changelog: Mapping[str, int],
    previous_assignment: Mapping[str, str],
    model: JobModel,
) -> tuple[list[CoordinatorStreamMessage], list[CoordinatorStreamMessage], list[CoordinatorStreamMessage]]:
    """The messages that bring the stream from what it holds to the submitted config and ``model``: the
    config's, the set-changelog and the task-to-container assignment messages."""
    messages = [
        CoordinatorStreamMessage.set_config(key, value, SOURCE)
        for key, value in sorted(config.items())
        if previous_config.get(key) != value
    ]
    messages += [
        CoordinatorStreamMessage.delete("set-config", key, SOURCE)
        for key in sorted(previous_config)
        if key not in config
    ]
    changelogs: list[CoordinatorStreamMessage] = []
    assignments: list[CoordinatorStreamMessage] = []
    for cid, container in model.containers.items():
        for name, task in sorted(container.tasks.items()):
            if previous_changelog.get(name) != task.changelog_partition:
                changelogs.append(
                    CoordinatorStreamMessage.set_changelog(name, task.changelog_partition, SOURCE)
                )
            if previous_assignment.get(name) != cid:
                assignments.append(CoordinatorStreamMessage.set_task_container(name, cid, SOURCE))
    return messages, changelogs, assignments


__all__ = ["SOURCE", "CoordinatorStore", "default_store", "stream_changes"]
