"""``task.chooser.class``: loading a chooser factory by dotted path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from samza_nb.chooser import (
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


def time_aligned_factory(
    config: Mapping[str, str], bootstrap_metadata: Any, inputs: Iterable[Any] | None, offset_comparator: Any
) -> MessageChooser:
    factory_calls.append((config, bootstrap_metadata, inputs, offset_comparator))
    return TimeAlignedChooser()


def broken_factory(config: Any, bootstrap_metadata: Any, inputs: Any, offset_comparator: Any) -> Any:
    return "not a chooser"


class SamzaStyleFactory:
    def get_chooser(
        self, config: Mapping[str, str], bootstrap_metadata: Any, inputs: Any, offset_comparator: Any
    ) -> MessageChooser:
        return RoundRobinChooser()


class NeedsArguments:
    def __init__(self, required: int) -> None: ...
    def update(self, envelope: Any) -> None: ...
    def choose(self) -> None: ...


NOT_CALLABLE = 42


def path(name: str) -> str:
    return f"{__name__}.{name}"


def test_a_factory_function() -> None:
    factory_calls.clear()
    config = Config({})
    factory = load_chooser_factory(path("time_aligned_factory"))
    chooser = factory(config, {}, ["kafka.a"], integer_offset_comparator)
    assert isinstance(chooser, TimeAlignedChooser)
    assert factory_calls == [(config, {}, ["kafka.a"], integer_offset_comparator)]


def test_a_class_with_from_config() -> None:
    factory = load_chooser_factory("samza_nb.chooser.DefaultChooser")
    chooser = factory(Config({"task.consumer.batch.size": "4"}), None, None, integer_offset_comparator)
    assert isinstance(chooser, DefaultChooser)
    assert chooser.batching is not None and chooser.batching.batch_size == 4


def test_a_chooser_class() -> None:
    factory = load_chooser_factory("samza_nb.chooser.RoundRobinChooser")
    assert isinstance(factory(Config({}), None, None, integer_offset_comparator), RoundRobinChooser)


def test_a_samza_style_factory_class() -> None:
    factory = load_chooser_factory(path("SamzaStyleFactory"))
    assert isinstance(factory(Config({}), None, None, integer_offset_comparator), RoundRobinChooser)


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
    with pytest.raises(ConfigError) as info:
        factory(Config({}), None, None, integer_offset_comparator)
    assert info.value.key == "task.chooser.class"


def test_a_factory_returning_no_chooser_is_an_error() -> None:
    factory = load_chooser_factory(path("broken_factory"))
    with pytest.raises(ConfigError, match="not a MessageChooser") as info:
        factory(Config({}), None, None, integer_offset_comparator)
    assert info.value.key == "task.chooser.class"


def test_create_chooser_uses_the_configured_class() -> None:
    chooser = create_chooser(Config({"task.chooser.class": path("time_aligned_factory")}))
    assert isinstance(chooser, TimeAlignedChooser)


def test_create_chooser_defaults_to_the_default_chooser() -> None:
    chooser = create_chooser(Config({"task.consumer.batch.size": "2"}))
    assert isinstance(chooser, DefaultChooser)
    assert chooser.batching is not None
