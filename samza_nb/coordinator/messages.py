"""Coordinator stream messages: what a job writes about itself to its coordinator stream, as Samza does.

A message is a key/value pair of compact UTF-8 JSON:

- key: ``[1, "<type>", "<key>"]`` (protocol version, message type, key of the message within its type);
- value: ``{"host": ..., "username": ..., "source": ..., "timestamp": <ms>, "values": {...}}``; a delete
  (a tombstone) has no value at all (``None``).

Types and their ``values``: ``set-config`` (key: config key, ``{"value": v}``), ``set-changelog`` (key: task
name, ``{"Partition": "<n>"}``: capital P, a string), ``set-container-host-assignment`` (key: container id,
``{"host": h}``) and ``set-task-container-assignment`` (key: task name, ``{"containerId": c}``). Messages of
other types are read and kept as they are.

Two messages are equal when their version, type, key, delete flag and values are (host, user, source and
timestamp are not compared), as in Samza.
"""

from __future__ import annotations

import getpass
import json
import socket
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from samza_nb.errors import SamzaError

VERSION: Final[int] = 1
"""Protocol version of the messages written (the first element of every key)."""

SET_CONFIG: Final[str] = "set-config"
SET_CHANGELOG: Final[str] = "set-changelog"
SET_CONTAINER_HOST: Final[str] = "set-container-host-assignment"
SET_TASK_CONTAINER: Final[str] = "set-task-container-assignment"

CONFIG_VALUE: Final[str] = "value"
CHANGELOG_PARTITION: Final[str] = "Partition"
HOST: Final[str] = "host"
CONTAINER_ID: Final[str] = "containerId"


def _compact(value: Any) -> bytes:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (a byte that was not UTF-8, surrogate-escaped)
        raise SamzaError(
            f"coordinator stream message {text[:80]!r}: not text UTF-8 can hold ({exc.reason} at character "
            f"{exc.start})"
        ) from None


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _username() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name and no USER/LOGNAME in the environment
        return ""


@dataclass(frozen=True, eq=False)
class CoordinatorStreamMessage:
    """One coordinator stream message (see the module docstring); ``values`` None means a delete.

    Build messages with :meth:`set_config`, :meth:`set_changelog`, :meth:`set_container_host`,
    :meth:`set_task_container` and :meth:`delete`; :meth:`encode` and :meth:`decode` convert them to and
    from the stream's bytes, unchanged for every message that :meth:`decode` accepts.
    """

    type: str
    key: str
    values: Mapping[str, Any] | None
    host: str = ""
    username: str = ""
    source: str = ""
    timestamp: int = 0
    version: int = VERSION

    def __post_init__(self) -> None:
        if self.values is not None:  # a copy: the caller's mapping may change later
            object.__setattr__(self, "values", dict(self.values))

    # -- constructors ---------------------------------------------------------------------------------
    @classmethod
    def create(
        cls, type: str, key: str, values: Mapping[str, Any] | None, source: str
    ) -> CoordinatorStreamMessage:
        """A message of ``type``/``key`` stamped with this host, user and the current time."""
        return cls(type, key, values, socket.gethostname(), _username(), source, _now_ms())

    @classmethod
    def set_config(cls, key: str, value: str, source: str) -> CoordinatorStreamMessage:
        """``set-config``: config ``key`` has ``value``."""
        return cls.create(SET_CONFIG, key, {CONFIG_VALUE: value}, source)

    @classmethod
    def set_changelog(cls, task: str, partition: int, source: str) -> CoordinatorStreamMessage:
        """``set-changelog``: ``task``'s stores use changelog partition ``partition``."""
        return cls.create(SET_CHANGELOG, task, {CHANGELOG_PARTITION: str(partition)}, source)

    @classmethod
    def set_container_host(cls, container_id: str, host: str, source: str) -> CoordinatorStreamMessage:
        """``set-container-host-assignment``: container ``container_id`` last ran on ``host``."""
        return cls.create(SET_CONTAINER_HOST, container_id, {HOST: host}, source)

    @classmethod
    def set_task_container(cls, task: str, container_id: str, source: str) -> CoordinatorStreamMessage:
        """``set-task-container-assignment``: ``task`` runs in container ``container_id``."""
        return cls.create(SET_TASK_CONTAINER, task, {CONTAINER_ID: container_id}, source)

    @classmethod
    def delete(cls, type: str, key: str, source: str) -> CoordinatorStreamMessage:
        """A delete (tombstone) of ``type``/``key``."""
        return cls.create(type, key, None, source)

    # -- reading --------------------------------------------------------------------------------------
    @property
    def is_delete(self) -> bool:
        """True for a delete (the message has no value)."""
        return self.values is None

    def value(self, name: str) -> Any:
        """``values[name]``, or None for a delete or a missing entry."""
        return None if self.values is None else self.values.get(name)

    # -- bytes ----------------------------------------------------------------------------------------
    def encode(self) -> tuple[bytes, bytes | None]:
        """The message's key and value as compact UTF-8 JSON; the value is None for a delete. A SamzaError
        when some text of it cannot be UTF-8 (a lone surrogate)."""
        key = _compact([self.version, self.type, self.key])
        if self.values is None:
            return key, None
        value = {
            "host": self.host,
            "username": self.username,
            "source": self.source,
            "timestamp": self.timestamp,
            "values": dict(self.values),
        }
        return key, _compact(value)

    @classmethod
    def decode(cls, key: bytes, value: bytes | None, where: str) -> CoordinatorStreamMessage:
        """The message in ``key``/``value`` (as :meth:`encode` writes them). Anything else is a SamzaError
        naming ``where`` (e.g. the stream and offset) and what is wrong."""
        try:
            parsed_key = json.loads(key)
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
            raise SamzaError(f"{where}: the key {key!r:.80} is not JSON: {exc}") from None
        if (
            not isinstance(parsed_key, list)
            or len(parsed_key) != 3
            or not isinstance(parsed_key[0], int)
            or isinstance(parsed_key[0], bool)
            or not isinstance(parsed_key[1], str)
            or not isinstance(parsed_key[2], str)
        ):
            raise SamzaError(
                f'{where}: the key {key!r:.80} is not a coordinator stream key [<version>, "<type>", "<key>"]'
            )
        version, type_, name = parsed_key
        if value is None:
            return cls(type_, name, None, version=version)
        try:
            parsed = json.loads(value)
        except (ValueError, UnicodeDecodeError, TypeError, RecursionError) as exc:
            raise SamzaError(
                f"{where}: the value {value!r:.80} of key {key!r:.80} is not JSON: {exc}"
            ) from None
        if not isinstance(parsed, dict):
            raise SamzaError(f"{where}: the value {value!r:.80} of key {key!r:.80} is not a JSON object")
        values = parsed.get("values")
        if values is None:
            values = {}
        if not isinstance(values, dict):
            raise SamzaError(f'{where}: the "values" of key {key!r:.80} are not a JSON object: {value!r:.80}')
        timestamp = parsed.get("timestamp", 0)
        if not isinstance(timestamp, int) or isinstance(timestamp, bool):
            raise SamzaError(f"{where}: the timestamp of key {key!r:.80} is not an integer: {timestamp!r}")
        return cls(
            type_,
            name,
            values,
            _text(parsed.get("host")),
            _text(parsed.get("username")),
            _text(parsed.get("source")),
            timestamp,
            version,
        )

    # -- identity -------------------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CoordinatorStreamMessage):
            return NotImplemented
        return (
            self.version == other.version
            and self.type == other.type
            and self.key == other.key
            and self.values == other.values
        )

    def __hash__(self) -> int:
        return hash((self.version, self.type, self.key, self.values is None))


def _text(value: Any) -> str:
    return "" if value is None else str(value)


__all__ = [
    "CHANGELOG_PARTITION",
    "CONFIG_VALUE",
    "CONTAINER_ID",
    "HOST",
    "SET_CHANGELOG",
    "SET_CONFIG",
    "SET_CONTAINER_HOST",
    "SET_TASK_CONTAINER",
    "VERSION",
    "CoordinatorStreamMessage",
]
