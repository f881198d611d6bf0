"""Bootstrapping a coordinator stream: what its messages, read from the start, add up to.

Samza's rules: messages are kept in the order they were last written, each one once (equality as
:class:`CoordinatorStreamMessage` defines it: type, key and values); writing a message equal to an earlier
one moves it to the end; a delete removes every message of its type and key. So key1=v1, key1=v2,
key1=v1 bootstraps to two messages, [v2, v1], and the config it describes is key1=v1: for each (type, key)
the last message in that order wins.
"""

from __future__ import annotations

from collections.abc import Iterable

from samza_nb.coordinator.driver_claim import DRIVER_CLAIM, DriverClaims
from samza_nb.coordinator.messages import (
    CHANGELOG_PARTITION,
    CONFIG_VALUE,
    CONTAINER_ID,
    HOST,
    SET_CHANGELOG,
    SET_CONFIG,
    SET_CONTAINER_HOST,
    SET_TASK_CONTAINER,
    CoordinatorStreamMessage,
)
from samza_nb.errors import SamzaError


class Bootstrapped:
    """The bootstrapped view of a coordinator stream, built one message at a time (:meth:`apply`)."""

    def __init__(self) -> None:
        self._messages: dict[CoordinatorStreamMessage, None] = {}  # an ordered set
        self._by_key: dict[tuple[str, str], set[CoordinatorStreamMessage]] = {}
        self.driver = DriverClaims()
        """The driver's claim on the job (its messages are folded there, not kept here)."""

    def apply(self, message: CoordinatorStreamMessage) -> None:
        """Take ``message``, the next one read from the stream."""
        if message.type == DRIVER_CLAIM:
            self.driver.apply(message)
            return
        ident = (message.type, message.key)
        if message.is_delete:
            for old in self._by_key.pop(ident, ()):
                self._messages.pop(old, None)
            return
        self._messages.pop(message, None)
        self._messages[message] = None
        self._by_key.setdefault(ident, set()).add(message)

    def messages(self, type: str | None = None) -> list[CoordinatorStreamMessage]:
        """The bootstrapped messages (of ``type`` only, when given), oldest first."""
        if type is None:
            return list(self._messages)
        return [m for m in self._messages if m.type == type]

    def latest(self, type: str) -> dict[str, CoordinatorStreamMessage]:
        """Key → the message of ``type`` that wins for that key (the last one), in the order of those
        messages."""
        winners: dict[str, CoordinatorStreamMessage] = {}
        for message in reversed(self._messages):
            if message.type == type and message.key not in winners:
                winners[message.key] = message
        return dict(reversed(winners.items()))


def bootstrap(messages: Iterable[CoordinatorStreamMessage]) -> list[CoordinatorStreamMessage]:
    """The messages a coordinator stream holding ``messages`` (oldest first) bootstraps to (see the module
    docstring)."""
    view = Bootstrapped()
    for message in messages:
        view.apply(message)
    return view.messages()


def config_of(view: Bootstrapped) -> dict[str, str]:
    """The config the ``set-config`` messages describe (the last value per key)."""
    latest = view.latest(SET_CONFIG).items()
    return {key: str(value) for key, m in latest if (value := m.value(CONFIG_VALUE)) is not None}


def changelog_mapping_of(view: Bootstrapped) -> dict[str, int]:
    """Task name → changelog partition from the ``set-changelog`` messages; a partition that is not an
    integer is a SamzaError naming the task."""
    mapping: dict[str, int] = {}
    for task, message in view.latest(SET_CHANGELOG).items():
        raw = message.value(CHANGELOG_PARTITION)
        try:
            partition = int(str(raw).strip())
        except ValueError:
            raise SamzaError(
                f"coordinator stream: set-changelog of task {task!r} has partition {raw!r}, not an integer"
            ) from None
        if partition < 0:
            raise SamzaError(
                f"coordinator stream: set-changelog of task {task!r} has partition {partition} < 0"
            )
        mapping[task] = partition
    return mapping


def container_hosts_of(view: Bootstrapped) -> dict[str, str]:
    """Container id → the host it last ran on (``set-container-host-assignment``)."""
    return {cid: str(m.value(HOST) or "") for cid, m in view.latest(SET_CONTAINER_HOST).items()}


def task_containers_of(view: Bootstrapped) -> dict[str, str]:
    """Task name → the container it was assigned to (``set-task-container-assignment``)."""
    return {task: str(m.value(CONTAINER_ID) or "") for task, m in view.latest(SET_TASK_CONTAINER).items()}


__all__ = [
    "Bootstrapped",
    "bootstrap",
    "changelog_mapping_of",
    "config_of",
    "container_hosts_of",
    "task_containers_of",
]
