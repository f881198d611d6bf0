"""The byte layout of intermediate stream messages (Samza's IntermediateMessageSerde).

A message is one type byte followed by its body: ``0`` a user message (its body through the user serde,
the ``json`` serde of :mod:`samza_nb.serde` by default), ``1`` a watermark, ``2`` an end-of-stream. A
control body is compact UTF-8 JSON with Samza's field names in Samza's order (not sorted: a fixed wire
layout, not user data): ``{"taskName": <str or null>, "version": 1}``, plus ``"timestamp": <ms>`` for a
watermark. Reading, ``"task-name"`` (the name Samza's JSON creators declare) is accepted for
``taskName`` and other fields (the ``taskCount`` of Samza releases before 0.14) are ignored; the consumer
side knows the producer count from the job model. Samza's type 3 (drain) is not supported.

Configure a stream's message serde as ``samza_nb.control.serde.IntermediateMessageSerde`` (or
``...PickleIntermediateMessageSerde`` for user values that are any picklable Python object; trusted data
only). Both are built with no arguments.
"""

from __future__ import annotations

import json
from typing import Any, Final

from samza_nb.control.messages import EndOfStreamMessage, WatermarkMessage
from samza_nb.errors import SamzaError
from samza_nb.serde import JsonSerde, PickleSerde, Serde, SerdeError

USER_MESSAGE: Final = 0
"""Type byte of a user message."""
WATERMARK: Final = 1
"""Type byte of a :class:`~samza_nb.control.messages.WatermarkMessage`."""
END_OF_STREAM: Final = 2
"""Type byte of an :class:`~samza_nb.control.messages.EndOfStreamMessage`."""

_USER_PREFIX: Final = bytes([USER_MESSAGE])
_WATERMARK_PREFIX: Final = bytes([WATERMARK])
_EOS_PREFIX: Final = bytes([END_OF_STREAM])
_DRAIN: Final = 3
_NAMES: Final = {WATERMARK: "watermark", END_OF_STREAM: "end-of-stream"}

_JSON: Final = JsonSerde()
"""The default user serde; it also reads control bodies."""
_encode_body: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def _short(data: bytes, limit: int = 80) -> str:
    text = repr(bytes(data))
    return text if len(text) <= limit else text[: limit - 3] + "..."


class IntermediateMessageSerde:
    """User and control messages of an intermediate stream ⇄ bytes (see the module docstring for the
    layout). ``user_serde`` encodes user messages (JSON when None). Decoding bytes that are not such a
    message is a SamzaError saying what is wrong; a user body the user serde refuses raises its error."""

    def __init__(self, user_serde: Serde | None = None) -> None:
        self.user_serde: Serde = user_serde if user_serde is not None else _JSON
        self._user_to_bytes = self.user_serde.to_bytes
        self._user_from_bytes = self.user_serde.from_bytes

    def to_bytes(self, obj: Any) -> bytes:
        """The type byte and body of ``obj``: a control message as JSON, anything else via the user serde."""
        kind = type(obj)
        if kind is WatermarkMessage:
            body = {"taskName": obj.task_name, "version": obj.version, "timestamp": obj.timestamp}
            return _WATERMARK_PREFIX + _encode_body(body).encode("utf-8")
        if kind is EndOfStreamMessage:
            body = {"taskName": obj.task_name, "version": obj.version}
            return _EOS_PREFIX + _encode_body(body).encode("utf-8")
        return _USER_PREFIX + self._user_to_bytes(obj)

    def from_bytes(self, data: bytes) -> Any:
        """The user or control message encoded in ``data``."""
        if not data:
            raise SamzaError("an intermediate stream message must start with a type byte; got no bytes")
        kind = data[0]
        if kind == USER_MESSAGE:
            return self._user_from_bytes(data[1:])
        if kind == WATERMARK:
            fields = _control_fields(data, kind)
            timestamp = fields.get("timestamp")
            if not isinstance(timestamp, int) or isinstance(timestamp, bool):
                raise SamzaError(
                    f'a watermark message needs an int "timestamp", got {timestamp!r} in {_short(data)}'
                )
            task_name, version = _task_and_version(fields, kind, data)
            return WatermarkMessage(task_name, version, timestamp=timestamp)
        if kind == END_OF_STREAM:
            task_name, version = _task_and_version(_control_fields(data, kind), kind, data)
            return EndOfStreamMessage(task_name, version)
        if kind == _DRAIN:
            raise SamzaError(f"intermediate message type 3 (Samza's drain) is not supported: {_short(data)}")
        raise SamzaError(
            f"unknown intermediate message type {kind} (expected 0 user message, 1 watermark, "
            f"2 end-of-stream): {_short(data)}"
        )


def _control_fields(data: bytes, kind: int) -> dict[str, Any]:
    name = _NAMES[kind]
    try:
        fields = _JSON.from_bytes(bytes(data[1:]))
    except SerdeError as exc:
        raise SamzaError(f"the body of a {name} message is not JSON ({_short(data)}): {exc}") from None
    if not isinstance(fields, dict):
        raise SamzaError(f"the body of a {name} message must be a JSON object, got {_short(data)}")
    return fields


def _task_and_version(fields: dict[str, Any], kind: int, data: bytes) -> tuple[str | None, int]:
    task_name = fields.get("taskName", fields.get("task-name"))
    if task_name is not None and not isinstance(task_name, str):
        raise SamzaError(
            f'the "taskName" of a {_NAMES[kind]} message must be a string or null, got {task_name!r} '
            f"in {_short(data)}"
        )
    version = fields.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool):
        raise SamzaError(
            f'the "version" of a {_NAMES[kind]} message must be an int, got {version!r} in {_short(data)}'
        )
    return task_name, version


class PickleIntermediateMessageSerde(IntermediateMessageSerde):
    """:class:`IntermediateMessageSerde` with user messages pickled (any picklable value). Trusted data
    only: decoding a pickle runs code the bytes name."""

    def __init__(self) -> None:
        super().__init__(PickleSerde())


__all__ = [
    "END_OF_STREAM",
    "USER_MESSAGE",
    "WATERMARK",
    "IntermediateMessageSerde",
    "PickleIntermediateMessageSerde",
]
