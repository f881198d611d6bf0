"""StreamSerdes: a system's key and message serdes, through the one serde registry."""

from __future__ import annotations

import pytest

from samza_nb.config import Config
from samza_nb.errors import ConfigError
from samza_nb.serde import (
    BytesSerde,
    DoubleSerde,
    JsonSerde,
    SerdeError,
    StreamSerdes,
    StringSerde,
    is_identity,
)


class Shout:
    """A serde registered by name."""

    def to_bytes(self, obj: str) -> bytes:
        return obj.upper().encode()

    def from_bytes(self, data: bytes) -> str:
        return data.decode()


def serdes(**values: str) -> StreamSerdes:
    return StreamSerdes(Config(values), "kafka")


def test_system_wide_then_per_stream_then_bytes() -> None:
    s = StreamSerdes(
        Config(
            {
                "systems.kafka.samza.msg.serde": "json",
                "systems.kafka.streams.raw.samza.msg.serde": "bytes",
                "systems.kafka.streams.prices.samza.msg.serde": "double",
            }
        ),
        "kafka",
    )
    assert isinstance(s.msg_serde("views"), JsonSerde)
    assert is_identity(s.msg_serde("raw"))
    assert isinstance(s.msg_serde("prices"), DoubleSerde)  # every built-in, double too
    assert is_identity(s.key_serde("views"))


def test_the_unset_default_names_the_key_to_set() -> None:
    serde = serdes().msg_serde("views")
    assert isinstance(serde, BytesSerde)
    with pytest.raises(SerdeError, match=r"systems\.kafka\.samza\.msg\.serde is not set"):
        serde.to_bytes("text")


def test_registered_names_and_samza_factory_class_names() -> None:
    s = serdes(
        **{
            "serializers.registry.shout.class": f"{__name__}.Shout",
            "serializers.registry.text.class": "org.apache.samza.serializers.StringSerdeFactory",
            "systems.kafka.samza.msg.serde": "shout",
            "systems.kafka.samza.key.serde": "text",
        }
    )
    assert s.msg_serde("x").to_bytes("hi") == b"HI"
    assert isinstance(s.key_serde("x"), StringSerde)


def test_json_bytes_are_the_stores_bytes() -> None:
    serde = serdes(**{"systems.kafka.samza.msg.serde": "json"}).msg_serde("views")
    assert serde.to_bytes({"b": 1, "a": "é"}) == '{"a":"é","b":1}'.encode()
    with pytest.raises(SerdeError, match="nan has no JSON form"):
        serde.to_bytes({"x": float("nan")})


def test_a_bad_name_is_a_config_error_naming_the_key() -> None:
    key = "systems.kafka.streams.views.samza.msg.serde"
    with pytest.raises(ConfigError, match=rf"{key}='yaml' is not a serde") as info:
        serdes(**{key: "yaml"}).msg_serde("views")
    assert info.value.key == key


def test_changelogs_stay_bytes_unless_configured_per_stream() -> None:
    s = serdes(
        **{
            "systems.kafka.samza.msg.serde": "json",
            "job.default.system": "kafka",
            "stores.a.changelog": "kafka.a-log",
            "stores.b.changelog": "b-log",
            "stores.c.changelog": "other.c-log",
            "systems.kafka.streams.b-log.samza.msg.serde": "string",
        }
    )
    assert s.changelog_streams() == {"a-log", "b-log"}
    assert is_identity(s.msg_serde("a-log"))
    assert isinstance(s.msg_serde("b-log"), StringSerde)
    assert isinstance(s.msg_serde("c-log"), JsonSerde)
