"""IntermediateMessageSerde: Samza's TestIntermediateMessageSerde ported, the byte layout and refusals."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest

from samza_nb.control import (
    EndOfStreamMessage,
    IntermediateMessageSerde,
    PickleIntermediateMessageSerde,
    WatermarkMessage,
)
from samza_nb.errors import SamzaError
from samza_nb.serde import PickleSerde, StringSerde, serde_for


@dataclass(frozen=True)
class UserMessage:
    message: str
    offset: int
    timestamp: int


def test_user_message_serde() -> None:
    """Samza's testUserMessageSerde (an object serde for user messages)."""
    serde = IntermediateMessageSerde(PickleSerde())
    message = UserMessage("this is a test message", 0, 1_700_000_000_000)
    data = serde.to_bytes(message)
    assert data[0] == 0
    decoded = serde.from_bytes(data)
    assert decoded == message
    assert type(decoded) is UserMessage


def test_watermark_message_serde() -> None:
    """Samza's testWatermarkMessageSerde."""
    serde = IntermediateMessageSerde(PickleSerde())
    watermark = WatermarkMessage("task-1", timestamp=1_700_000_000_000)
    data = serde.to_bytes(watermark)
    assert data[0] == 1
    decoded = serde.from_bytes(data)
    assert type(decoded) is WatermarkMessage
    assert decoded == watermark
    assert decoded.task_name == "task-1"
    assert decoded.timestamp == 1_700_000_000_000


def test_end_of_stream_message_serde() -> None:
    """Samza's testEndOfStreamMessageSerde."""
    serde = IntermediateMessageSerde(PickleSerde())
    decoded = serde.from_bytes(serde.to_bytes(EndOfStreamMessage("task-1")))
    assert type(decoded) is EndOfStreamMessage
    assert decoded.task_name == "task-1"
    assert decoded.version == 1


def test_user_message_serde_error_propagates() -> None:
    """Samza's testUserMessageSerdeException: the user serde gets exactly the body, and its error surfaces."""
    seen: list[bytes] = []

    class Refusing:
        def to_bytes(self, obj: Any) -> bytes:
            raise AssertionError("not called")

        def from_bytes(self, data: bytes) -> Any:
            seen.append(data)
            raise ValueError("user message serde failed to deserialize this message")

    with pytest.raises(ValueError, match="user message serde failed"):
        IntermediateMessageSerde(Refusing()).from_bytes(bytes([0, 1, 2]))
    assert seen == [bytes([1, 2])]


def test_byte_layout() -> None:
    serde = IntermediateMessageSerde()
    assert serde.to_bytes({"a": [1, 2]}) == b'\x00{"a":[1,2]}'
    assert serde.to_bytes(EndOfStreamMessage("t0")) == b'\x02{"taskName":"t0","version":1}'
    assert serde.to_bytes(EndOfStreamMessage()) == b'\x02{"taskName":null,"version":1}'
    assert (
        serde.to_bytes(WatermarkMessage("ünï", timestamp=17))
        == b"\x01" + '{"taskName":"ünï","version":1,"timestamp":17}'.encode()
    )


@pytest.mark.parametrize(
    "message",
    [
        EndOfStreamMessage(),
        EndOfStreamMessage("task 3"),
        WatermarkMessage(timestamp=0),
        WatermarkMessage("Partition 2", timestamp=-1),
        WatermarkMessage("t", 1, timestamp=2**62),
        "text",
        None,
        [1, {"k": "v"}],
    ],
)
def test_round_trip(message: object) -> None:
    for serde in (IntermediateMessageSerde(), PickleIntermediateMessageSerde()):
        assert serde.from_bytes(serde.to_bytes(message)) == message


def test_pickle_variant_carries_any_picklable_value() -> None:
    serde = PickleIntermediateMessageSerde()
    value = (UserMessage("m", 1, 2), {3, 4}, b"raw")
    assert serde.from_bytes(serde.to_bytes(value)) == value


def test_reads_samzas_field_variants() -> None:
    serde = IntermediateMessageSerde()
    # Samza's JSON creators name the field "task-name"; releases before 0.14 also wrote a task count
    old = {"task-name": "t1", "version": 1, "taskCount": 2, "timestamp": 9}
    assert serde.from_bytes(b"\x01" + json.dumps(old).encode()) == WatermarkMessage("t1", timestamp=9)
    assert serde.from_bytes(b'\x02{"version":1}') == EndOfStreamMessage()
    assert serde.from_bytes(b"\x02{}") == EndOfStreamMessage()


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        (b"", "type byte"),
        (b"\x05abc", "unknown intermediate message type 5"),
        (b"\x03{}", "drain"),
        (b"\x01not json", "watermark message is not JSON"),
        (b"\x02\xff\xfe", "end-of-stream message is not JSON"),
        (b"\x02[1]", "must be a JSON object"),
        (b'\x01{"taskName":"t","version":1}', '"timestamp"'),
        (b'\x01{"taskName":"t","timestamp":"9"}', '"timestamp"'),
        (b'\x01{"taskName":"t","timestamp":true}', '"timestamp"'),
        (b'\x02{"taskName":5}', '"taskName"'),
        (b'\x02{"taskName":"t","version":"1"}', '"version"'),
    ],
)
def test_bad_bytes_are_refused_saying_why(data: bytes, complaint: str) -> None:
    with pytest.raises(SamzaError, match=complaint.replace("(", r"\(")):
        IntermediateMessageSerde().from_bytes(data)


def test_bad_user_body_with_the_default_json_serde() -> None:
    with pytest.raises(SamzaError, match="not JSON"):
        IntermediateMessageSerde().from_bytes(b"\x00{oops")
    with pytest.raises(SamzaError, match="cannot encode"):
        IntermediateMessageSerde().to_bytes({1, 2})


def test_named_by_dotted_path_in_config() -> None:
    key = "systems.log.streams.x.samza.msg.serde"
    plain = serde_for("samza_nb.control.serde.IntermediateMessageSerde", key)
    pickled = serde_for("samza_nb.control.serde.PickleIntermediateMessageSerde", key)
    assert type(plain) is IntermediateMessageSerde
    assert type(pickled) is PickleIntermediateMessageSerde
    assert plain.from_bytes(plain.to_bytes("x")) == "x"


def test_custom_user_serde() -> None:
    serde = IntermediateMessageSerde(StringSerde())
    assert serde.to_bytes("héllo") == b"\x00" + "héllo".encode()
    assert serde.from_bytes(serde.to_bytes(EndOfStreamMessage("a"))) == EndOfStreamMessage("a")
