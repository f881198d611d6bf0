"""SerdeRegistry: built-ins by name, user serdes from serializers.registry.<name>.class, clear errors."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.errors import ConfigError
from samza_nb.serde import BUILTIN_SERDES, IntSerde, JsonSerde, SerdeRegistry, StringSerde


class UpperSerde:
    """A user serde: upper-cases on the way in."""

    def to_bytes(self, obj: Any) -> bytes:
        return str(obj).upper().encode()

    def from_bytes(self, data: bytes) -> Any:
        return data.decode()


class UpperSerdeFactory:
    """A Samza-style factory: get_serde(name, config)."""

    calls: list[str] = []

    def get_serde(self, name: str, config: Config) -> UpperSerde:
        self.calls.append(name)
        return UpperSerde()


class NotASerde:
    pass


def registry(**classes: str) -> SerdeRegistry:
    return SerdeRegistry.from_config(
        Config({f"serializers.registry.{n}.class": c for n, c in classes.items()})
    )


def test_builtins_by_name() -> None:
    reg = SerdeRegistry.from_config(Config())
    assert set(BUILTIN_SERDES) == {"string", "json", "bytes", "int", "long", "double", "pickle"}
    assert isinstance(reg.get("string"), StringSerde)
    assert isinstance(reg.get("json"), JsonSerde)
    assert isinstance(reg.get("integer"), IntSerde)  # Samza's name
    assert reg.get("int") is reg.get("int")  # one instance per registry


def test_user_serde_class() -> None:
    reg = registry(upper=f"{__name__}.UpperSerde")
    serde = reg.get("upper")
    assert isinstance(serde, UpperSerde)
    assert serde.to_bytes("a") == b"A"
    assert "upper" in reg.names()


def test_user_serde_factory_gets_name_and_config() -> None:
    UpperSerdeFactory.calls.clear()
    reg = registry(shout=f"{__name__}.UpperSerdeFactory")
    assert isinstance(reg.get("shout"), UpperSerde)
    assert UpperSerdeFactory.calls == ["shout"]


def test_config_overrides_a_builtin_name() -> None:
    assert isinstance(registry(string=f"{__name__}.UpperSerde").get("string"), UpperSerde)


def test_samza_factory_class_names_map_to_builtins() -> None:
    reg = registry(
        s="org.apache.samza.serializers.StringSerdeFactory",
        i="org.apache.samza.serializers.IntegerSerdeFactory",
    )
    assert isinstance(reg.get("s"), StringSerde)
    assert isinstance(reg.get("i"), IntSerde)


def test_unknown_name_names_the_referencing_key() -> None:
    with pytest.raises(ConfigError) as info:
        SerdeRegistry.from_config(Config()).get("avro", key="stores.counts.msg.serde")
    assert info.value.key == "stores.counts.msg.serde"
    assert "avro" in str(info.value)
    assert "serializers.registry.avro.class" in str(info.value)


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("no_such_module_xyz.Serde", "module 'no_such_module_xyz' not found"),
        (f"{__name__}.Missing", "has no"),
        (f"{__name__}.NotASerde", "is not a serde"),
    ],
)
def test_bad_user_serde_names_its_class_key(path: str, needle: str) -> None:
    with pytest.raises(ConfigError, match=needle) as info:
        registry(mine=path).get("mine", key="stores.s.key.serde")
    assert info.value.key == "serializers.registry.mine.class"


def test_a_name_may_be_a_samza_factory_class_name_or_a_dotted_path() -> None:
    reg = SerdeRegistry.from_config(Config())
    key = "systems.log.samza.msg.serde"
    assert isinstance(reg.get("org.apache.samza.serializers.JsonSerdeFactory", key=key), JsonSerde)
    assert isinstance(reg.get("org.apache.samza.serializers.IntegerSerdeFactory", key=key), IntSerde)
    assert isinstance(reg.get(f"{__name__}.UpperSerde", key=key), UpperSerde)
    assert isinstance(reg.get(f"{__name__}.UpperSerdeFactory", key=key), UpperSerde)
    assert isinstance(reg.get("JSON", key=key), JsonSerde)  # built-in names in any case


def test_a_bad_dotted_path_names_the_key_that_used_it() -> None:
    key = "systems.log.samza.msg.serde"
    with pytest.raises(ConfigError, match="module 'no_such_module_xyz' not found") as info:
        SerdeRegistry.from_config(Config()).get("no_such_module_xyz.Serde", key=key)
    assert info.value.key == key
    with pytest.raises(ConfigError, match="is not a serde") as info:
        SerdeRegistry.from_config(Config()).get(f"{__name__}.NotASerde", key=key)
    assert info.value.key == key
