"""``task.chooser.class``: loading a chooser factory by dotted path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from samza_nb.chooser import (
    ChooserFactory,
    DefaultChooser,
    MessageChooser,
    RoundRobinChooser,
    TimeAlignedChooser,
    create_chooser,
    integer_offset_comparator,
    load_chooser_factory,
)
from samza_nb.config import Config
from samza_nb.errors import ConfigError

factory_calls: list[tuple[Any, ...]] = []


class TimeAlignedFactory:
    """A ChooserFactory that is not a chooser itself."""

    @staticmethod
    def from_config(
        config: Mapping[str, str],
        bootstrap_metadata: Any,
        inputs: Iterable[Any] | None,
        offset_comparator: Any,
    ) -> MessageChooser:
        factory_calls.append((config, bootstrap_metadata, inputs, offset_comparator))
        return TimeAlignedChooser()


class BrokenFactory:
    @classmethod
    def from_config(cls, config: Any, bootstrap_metadata: Any, inputs: Any, offset_comparator: Any) -> Any:
        return "not a chooser"


def time_aligned_factory(config: Any, bootstrap_metadata: Any, inputs: Any, offset_comparator: Any) -> Any:
    """A bare factory function: not one of the two shapes."""
    return TimeAlignedChooser()


class SamzaStyleFactory:
    """Samza's MessageChooserFactory style: not one of the two shapes."""

    def get_chooser(
        self, config: Mapping[str, str], bootstrap_metadata: Any, inputs: Any, offset_comparator: Any
    ) -> MessageChooser:
        return RoundRobinChooser()


class NeedsArguments:
    def __init__(self, required: int) -> None: ...
    def register(self, ssp: Any, offset: Any) -> None: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def update(self, envelope: Any) -> None: ...
    def choose(self) -> None: ...


NOT_CALLABLE = 42


def path(name: str) -> str:
    return f"{__name__}.{name}"


def test_a_chooser_factory() -> None:
    factory_calls.clear()
    config = Config({})
    factory = load_chooser_factory(path("TimeAlignedFactory"))
    chooser = factory.from_config(config, {}, ["kafka.a"], integer_offset_comparator)
    assert isinstance(chooser, TimeAlignedChooser)
    assert factory_calls == [(config, {}, ["kafka.a"], integer_offset_comparator)]


def test_a_chooser_class_with_from_config_is_built_through_it() -> None:
    factory = load_chooser_factory("samza_nb.chooser.DefaultChooser")
    assert isinstance(factory, ChooserFactory)
    config = Config({"task.consumer.batch.size": "4"})
    chooser = factory.from_config(config, None, None, integer_offset_comparator)
    assert isinstance(chooser, DefaultChooser)
    assert chooser.batching is not None and chooser.batching.batch_size == 4


def test_a_chooser_class() -> None:
    factory = load_chooser_factory("samza_nb.chooser.RoundRobinChooser")
    chooser = factory.from_config(Config({}), None, None, integer_offset_comparator)
    assert isinstance(chooser, RoundRobinChooser)


@pytest.mark.parametrize("name", ["time_aligned_factory", "SamzaStyleFactory", "NOT_CALLABLE"])
def test_other_shapes_are_refused_naming_the_key_and_the_two_shapes(name: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_chooser_factory(path(name))
    assert info.value.key == "task.chooser.class"
    message = str(info.value)
    assert message.startswith(f"task.chooser.class={path(name)!r} names ")
    assert "neither of the two chooser plug-ins" in message
    assert "ChooserFactory" in message and "from_config(" in message
    assert "MessageChooser class" in message and "no arguments" in message


@pytest.mark.parametrize(
    "dotted",
    ["no_such_module_xyz.Chooser", "samza_nb.chooser.NoSuchChooser", "nodots", path("NOT_CALLABLE")],
)
def test_unusable_paths_name_the_key_and_the_path(dotted: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_chooser_factory(dotted)
    assert info.value.key == "task.chooser.class"
    assert "task.chooser.class" in str(info.value)
    assert dotted in str(info.value)


def test_a_class_that_needs_arguments_is_an_error_when_built() -> None:
    factory = load_chooser_factory(path("NeedsArguments"))
    with pytest.raises(ConfigError, match="cannot be instantiated without arguments") as info:
        factory.from_config(Config({}), None, None, integer_offset_comparator)
    assert info.value.key == "task.chooser.class"


def test_a_factory_returning_no_chooser_is_an_error() -> None:
    factory = load_chooser_factory(path("BrokenFactory"))
    with pytest.raises(ConfigError, match="not a MessageChooser") as info:
        factory.from_config(Config({}), None, None, integer_offset_comparator)
    assert info.value.key == "task.chooser.class"


def test_create_chooser_uses_the_configured_class() -> None:
    chooser = create_chooser(Config({"task.chooser.class": path("TimeAlignedFactory")}))
    assert isinstance(chooser, TimeAlignedChooser)


def test_create_chooser_defaults_to_the_default_chooser() -> None:
    chooser = create_chooser(Config({"task.consumer.batch.size": "2"}))
    assert isinstance(chooser, DefaultChooser)
    assert chooser.batching is not None
