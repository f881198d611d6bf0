"""Every built-in serde's ``from_bytes`` on arbitrary bytes: a value, or a SamzaError with a message.

Stores and streams share one set of built-ins (:mod:`samza_nb.serde`). What each writes reads back equal."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from samza_nb.control.messages import EndOfStreamMessage, WatermarkMessage
from samza_nb.control.serde import IntermediateMessageSerde, PickleIntermediateMessageSerde
from samza_nb.serde.registry import BUILTIN_SERDES
from tests.fuzz.budget import fuzz, parses, valid_inputs
from tests.fuzz.strategies import DEEP_LIST, DEEP_OBJECT, any_bytes
from tests.fuzz.valid import SERDE_VALUES, control_messages, json_documents

SERDES = dict(BUILTIN_SERDES)


@pytest.mark.parametrize("name", sorted(SERDES))
@fuzz
@given(data=any_bytes)
@example(data=DEEP_LIST)
@example(data=DEEP_OBJECT)
def test_from_bytes(name: str, data: bytes) -> None:
    parses(SERDES[name]().from_bytes, data)


@pytest.mark.parametrize("make", [IntermediateMessageSerde, PickleIntermediateMessageSerde])
@fuzz
@given(data=any_bytes)
@example(data=b"\x00" + DEEP_LIST)
@example(data=b"\x01" + DEEP_OBJECT)
@example(data=b"\x02" + DEEP_LIST)
def test_intermediate_message_from_bytes(make: type[IntermediateMessageSerde], data: bytes) -> None:
    parses(make().from_bytes, data)


@pytest.mark.parametrize("kind", [b"\x01", b"\x02"])
@fuzz
@given(body=any_bytes)
def test_control_message_bodies(kind: bytes, body: bytes) -> None:
    """Watermark and end-of-stream bodies (JSON objects with the control fields) get past the type byte."""
    parses(IntermediateMessageSerde().from_bytes, kind + body)


# -- valid inputs: what a serde writes reads back ----------------------------------------------------


def test_every_builtin_has_valid_values() -> None:
    assert sorted(SERDE_VALUES) == sorted(SERDES), "a built-in serde without a strategy of its values"


@pytest.mark.parametrize("name", sorted(SERDES))
@valid_inputs
@given(data=st.data())
def test_valid_values_round_trip(name: str, data: st.DataObject) -> None:
    """Every value a built-in serde encodes decodes from its bytes as an equal value of the same type."""
    value = data.draw(SERDE_VALUES[name], label="value")
    serde = SERDES[name]()
    decoded = serde.from_bytes(serde.to_bytes(value))
    assert decoded == value
    assert type(decoded) is type(value)


@pytest.mark.parametrize("make", [IntermediateMessageSerde, PickleIntermediateMessageSerde])
@valid_inputs
@given(message=st.one_of(control_messages, json_documents))
def test_valid_intermediate_messages_round_trip(
    make: type[IntermediateMessageSerde], message: object
) -> None:
    """User messages, watermarks and end-of-stream messages (from any task, of any version) read back as
    the same message of the same type."""
    serde = make()
    decoded = serde.from_bytes(serde.to_bytes(message))
    assert decoded == message
    assert type(decoded) is type(message)


@valid_inputs
@given(message=control_messages, spelling=st.sampled_from(["taskName", "task-name"]), count=st.integers(1, 9))
def test_valid_samza_control_bodies(message: object, spelling: str, count: int) -> None:
    """Control messages as Samza writes them (``task-name`` spelled its way, older releases'
    ``taskCount``) read as the message they describe."""
    assert isinstance(message, (EndOfStreamMessage, WatermarkMessage))
    body: dict[str, object] = {spelling: message.task_name, "version": message.version, "taskCount": count}
    kind = b"\x02"
    if isinstance(message, WatermarkMessage):
        body["timestamp"] = message.timestamp
        kind = b"\x01"
    assert IntermediateMessageSerde().from_bytes(kind + json.dumps(body).encode()) == message
