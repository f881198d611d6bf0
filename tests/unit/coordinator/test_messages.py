"""Coordinator stream messages: Samza's TestCoordinatorStreamMessage and the wire format."""

from __future__ import annotations

import json

import pytest

from samza_nb.coordinator import CoordinatorStreamMessage
from samza_nb.coordinator.messages import SET_CHANGELOG, SET_CONFIG, VERSION
from samza_nb.errors import SamzaError

Msg = CoordinatorStreamMessage


def test_a_new_message_carries_source_version_user_and_time() -> None:
    message = Msg.set_config("key", "value", "source")
    assert message.source == "source"
    assert message.version == VERSION == 1
    assert isinstance(message.username, str)
    assert message.timestamp > 0
    assert not message.is_delete
    again = Msg.decode(*message.encode(), where="test")
    assert again == message
    assert (again.host, again.username, again.source, again.timestamp) == (
        message.host,
        message.username,
        message.source,
        message.timestamp,
    )


def test_set_config() -> None:
    message = Msg.set_config("key", "value", "source")
    assert (message.type, message.key, message.value("value")) == (SET_CONFIG, "key", "value")
    assert not message.is_delete


def test_a_delete_has_no_value() -> None:
    delete = Msg.delete("delete-type", "key", "source2")
    assert (delete.type, delete.key, delete.version) == ("delete-type", "key", VERSION)
    assert delete.is_delete
    assert delete.values is None
    assert delete.value("value") is None
    key, value = delete.encode()
    assert value is None
    assert json.loads(key) == [1, "delete-type", "key"]


def test_equality_and_hash_follow_type_key_and_values_only() -> None:
    message = Msg.set_config("key1", "value1", "source")
    same = Msg("set-config", "key1", {"value": "value1"}, "other-host", "other-user", "other-source", 7)
    other_key = Msg.set_config("key2", "value1", "source")
    assert message == same and hash(message) == hash(same)
    assert message != other_key
    assert message != Msg.set_config("key1", "value2", "source")
    assert message != Msg.delete(SET_CONFIG, "key1", "source")
    assert Msg.delete(SET_CONFIG, "key1", "a") == Msg.delete(SET_CONFIG, "key1", "b")
    assert message != Msg("set-config", "key1", {"value": "value1"}, version=2)
    # Samza's testEqualsNPEonNullValues: empty values and a delete differ, without an error.
    assert Msg("t", "k", {}) != Msg("t", "k", None)


def test_encoding_is_compact_json_in_samza_layout() -> None:
    message = Msg("set-changelog", "Partition 3", {"Partition": "3"}, "h", "u", "s", 1700000000000)
    key, value = message.encode()
    assert key == b'[1,"set-changelog","Partition 3"]'
    assert value == (
        b'{"host":"h","username":"u","source":"s","timestamp":1700000000000,"values":{"Partition":"3"}}'
    )


def test_typed_constructors_write_samza_values() -> None:
    assert Msg.set_changelog("Partition 0", 4, "s").values == {"Partition": "4"}
    assert Msg.set_changelog("Partition 0", 4, "s").type == SET_CHANGELOG
    host = Msg.set_container_host("1", "box-7", "s")
    assert (host.type, host.key, host.values) == ("set-container-host-assignment", "1", {"host": "box-7"})
    task = Msg.set_task_container("Partition 2", "1", "s")
    assert (task.type, task.key, task.values) == (
        "set-task-container-assignment",
        "Partition 2",
        {"containerId": "1"},
    )


def test_non_ascii_keys_and_values_round_trip_as_utf8() -> None:
    message = Msg.set_config("clé", "värde ✓", "s")
    key, value = message.encode()
    assert "clé".encode() in key and value is not None and "värde ✓".encode() in value
    assert Msg.decode(key, value, "x") == message


def test_messages_written_by_samza_decode() -> None:
    # Jackson writes the fields of a HashMap in any order, and may add fields this project does not know.
    key = b'[1,"set-container-host-assignment","0"]'
    value = (
        b'{"values":{"host":"10.0.0.5","jmx-url":"","jmx-tunneling-url":""},"source":"SamzaContainer",'
        b'"username":"samza","host":"10.0.0.5","timestamp":1500000000000}'
    )
    message = Msg.decode(key, value, "x")
    assert message.value("host") == "10.0.0.5"
    assert (message.source, message.username, message.timestamp) == ("SamzaContainer", "samza", 1500000000000)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        (b"not json", b"{}", "is not JSON"),
        (b'{"type":"set-config"}', b"{}", "is not a coordinator stream key"),
        (b'[1,"set-config"]', b"{}", "is not a coordinator stream key"),
        (b'["1","set-config","k"]', b"{}", "is not a coordinator stream key"),
        (b'[1,"set-config","k"]', b"{oops", "is not JSON"),
        (b'[1,"set-config","k"]', b"[1,2]", "is not a JSON object"),
        (b'[1,"set-config","k"]', b'{"values":[1]}', '"values"'),
        (b'[1,"set-config","k"]', b'{"values":{},"timestamp":"soon"}', "timestamp"),
    ],
)
def test_malformed_messages_are_errors_naming_where(key: bytes, value: bytes, problem: str) -> None:
    with pytest.raises(SamzaError, match=problem) as caught:
        Msg.decode(key, value, "log.__samza_coordinator_j_1 offset 17")
    assert "offset 17" in str(caught.value)
