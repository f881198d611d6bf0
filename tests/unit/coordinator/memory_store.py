"""A coordinator store kept in memory (a test double for the coordinator stream's bootstrapped views)."""

from __future__ import annotations

from collections.abc import Sequence

from samza_nb.coordinator.driver_claim import DRIVER_CLAIM, DriverClaim, DriverClaims
from samza_nb.coordinator.messages import CoordinatorStreamMessage


class MemoryStore:
    """Holds the messages sent; views are last-wins per (type, key), deletes remove."""

    def __init__(self, messages: Sequence[CoordinatorStreamMessage] = ()) -> None:
        self.messages: list[CoordinatorStreamMessage] = list(messages)
        self.started = 0
        self.stopped = 0

    async def start(self) -> None:
        self.started += 1

    async def catch_up(self) -> None:
        pass

    def _view(self, type: str) -> dict[str, dict[str, str]]:
        view: dict[str, dict[str, str]] = {}
        for message in self.messages:
            if message.type != type:
                continue
            if message.values is None:
                view.pop(message.key, None)
            else:
                view[message.key] = dict(message.values)
        return view

    def config(self) -> dict[str, str]:
        return {k: v["value"] for k, v in self._view("set-config").items()}

    def changelog_mapping(self) -> dict[str, int]:
        return {k: int(v["Partition"]) for k, v in self._view("set-changelog").items()}

    def container_hosts(self) -> dict[str, str]:
        return {k: v["host"] for k, v in self._view("set-container-host-assignment").items()}

    def task_containers(self) -> dict[str, str]:
        return {k: v["containerId"] for k, v in self._view("set-task-container-assignment").items()}

    def driver(self) -> DriverClaim | None:
        claims = DriverClaims()
        for message in self.messages:
            if message.type == DRIVER_CLAIM:
                claims.apply(message)
        return claims.current

    async def send(self, messages: Sequence[CoordinatorStreamMessage]) -> None:
        self.messages.extend(messages)

    async def stop(self) -> None:
        self.stopped += 1
