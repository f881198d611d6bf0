"""Interim stand-in for the coordinator stream messages (replaced by the full module on merge)."""

from __future__ import annotations

import getpass
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class CoordinatorStreamMessage:
    """One coordinator stream message (type, key, values; None values = delete)."""

    type: str
    key: str
    values: Mapping[str, Any] | None
    source: str = ""
    host: str = field(default_factory=socket.gethostname, compare=False)
    username: str = field(default_factory=getpass.getuser, compare=False)
    timestamp: int = field(default_factory=lambda: int(time.time() * 1000), compare=False)

    @classmethod
    def set_config(cls, key: str, value: str, source: str) -> CoordinatorStreamMessage:
        """A set-config message."""
        return cls("set-config", key, {"value": value}, source)

    @classmethod
    def set_changelog(cls, task: str, partition: int, source: str) -> CoordinatorStreamMessage:
        """A set-changelog message."""
        return cls("set-changelog", task, {"Partition": str(partition)}, source)

    @classmethod
    def set_container_host(cls, container_id: str, host: str, source: str) -> CoordinatorStreamMessage:
        """A set-container-host-assignment message."""
        return cls("set-container-host-assignment", container_id, {"host": host}, source)

    @classmethod
    def set_task_container(cls, task: str, container_id: str, source: str) -> CoordinatorStreamMessage:
        """A set-task-container-assignment message."""
        return cls("set-task-container-assignment", task, {"containerId": container_id}, source)

    @classmethod
    def delete(cls, type: str, key: str, source: str) -> CoordinatorStreamMessage:
        """A delete of (type, key)."""
        return cls(type, key, None, source)
