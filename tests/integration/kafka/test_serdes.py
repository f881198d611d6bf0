"""The serdes at the Kafka boundary (no broker needed)."""

from __future__ import annotations

import pytest

from samza_nb.errors import ConfigError, SamzaError
from samza_nb.serde import BytesSerde, is_identity, serde_for


class Upper:
    """A custom serde: text, upper-cased on the way in."""

    def to_bytes(self, obj: str) -> bytes:
        return obj.encode()

    def from_bytes(self, data: bytes) -> str:
        return data.decode().upper()


@pytest.mark.parametrize(
    ("name", "value", "encoded"),
    [
        ("bytes", b"\x00\x01", b"\x00\x01"),
        ("string", "héllo", "héllo".encode()),
        ("json", {"a": [1, "é"]}, '{"a":[1,"é"]}'.encode()),
        ("int", -2, b"\xff\xff\xff\xfe"),
        ("long", 2**40, (2**40).to_bytes(8, "big")),
    ],
)
def test_built_in_serdes_round_trip(name: str, value: object, encoded: bytes) -> None:
    serde = serde_for(name, "k")
    assert serde.to_bytes(value) == encoded
    assert serde.from_bytes(encoded) == value


def test_bytes_is_the_identity_and_refuses_other_values() -> None:
    assert is_identity(serde_for("bytes", "k")) and not is_identity(serde_for("string", "k"))
    assert BytesSerde().to_bytes(bytearray(b"ab")) == b"ab"
    with pytest.raises(SamzaError, match=r"bytes serde cannot encode .text. \(str\)"):
        BytesSerde().to_bytes("text")


def test_bad_values_are_clear_errors() -> None:
    with pytest.raises(SamzaError, match="not UTF-8"):
        serde_for("string", "k").from_bytes(b"\xff")
    with pytest.raises(SamzaError, match="not JSON"):
        serde_for("json", "k").from_bytes(b"{")
    with pytest.raises(SamzaError, match="cannot encode"):
        serde_for("json", "k").to_bytes(object())
    with pytest.raises(SamzaError, match="exactly 4 bytes"):
        serde_for("int", "k").from_bytes(b"\x00")
    with pytest.raises(SamzaError, match="out of range"):
        serde_for("int", "k").to_bytes(2**40)


def test_custom_serdes_by_dotted_path_and_unknown_names() -> None:
    serde = serde_for(f"{__name__}.Upper", "systems.k.samza.msg.serde")
    assert serde.from_bytes(b"abc") == "ABC"
    with pytest.raises(ConfigError, match="systems.k.samza.msg.serde='yaml' is not a serde"):
        serde_for("yaml", "systems.k.samza.msg.serde")
    with pytest.raises(ConfigError, match="cannot be imported: module 'no' not found"):
        serde_for("no.such.Serde", "systems.k.samza.msg.serde")


def test_store_changelogs_stay_bytes_whatever_the_system_serde() -> None:
    from samza_nb import Config
    from samza_nb.systems.kafka import KafkaSystemConfig

    settings = KafkaSystemConfig.from_config(
        "kafka",
        Config(
            {
                "systems.kafka.bootstrap.servers": "h:1",
                "systems.kafka.samza.msg.serde": "json",
                "job.default.system": "kafka",
                "stores.a.changelog": "kafka.a-log",
                "stores.b.changelog": "b-log",
                "stores.c.changelog": "other.c-log",
                "systems.kafka.streams.pinned.samza.msg.serde": "string",
            }
        ),
    )
    assert settings.changelog_streams() == {"a-log", "b-log"}
    assert is_identity(settings.msg_serde("a-log")) and is_identity(settings.msg_serde("b-log"))
    assert type(settings.msg_serde("c-log")).__name__ == "JsonSerde"
    assert type(settings.msg_serde("pinned")).__name__ == "StringSerde"
