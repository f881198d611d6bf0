"""The chooser's configuration keys and the errors they raise (ports of Samza's config tests included)."""

from __future__ import annotations

import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.chooser import DefaultChooser, read_chooser_settings
from samza_nb.config import Config
from samza_nb.errors import ConfigError

FOO = SystemStream("kafka", "foo")
BAR_BAZ = SystemStream("kafka", "bar-baz")


def test_bootstrap_config() -> None:
    settings = read_chooser_settings(
        Config(
            {
                "task.inputs": "kafka.foo,kafka.bar-baz",
                "systems.kafka.streams.bar-baz.samza.bootstrap": "true",
            }
        )
    )
    assert settings.bootstrap_streams == {BAR_BAZ}
    assert settings.inputs == (FOO, BAR_BAZ)


def test_priority_config() -> None:
    settings = read_chooser_settings(
        Config(
            {"task.inputs": "kafka.foo,kafka.bar-baz", "systems.kafka.streams.bar-baz.samza.priority": "3"}
        )
    )
    assert settings.priorities == {BAR_BAZ: 3}


def test_seed_priority_form_is_accepted() -> None:
    settings = read_chooser_settings(
        Config({"task.inputs": "kafka.foo,kafka.bar-baz", "task.chooser.priorities.kafka.foo": "7"})
    )
    assert settings.priorities == {FOO: 7}


def test_both_priority_forms_must_agree() -> None:
    base = {"task.inputs": "kafka.foo", "systems.kafka.streams.foo.samza.priority": "2"}
    agreed = read_chooser_settings(Config({**base, "task.chooser.priorities.kafka.foo": "2"}))
    assert agreed.priorities == {FOO: 2}
    with pytest.raises(ConfigError, match="two different priorities"):
        read_chooser_settings(Config({**base, "task.chooser.priorities.kafka.foo": "3"}))


def test_stream_names_may_contain_dots() -> None:
    settings = read_chooser_settings(
        Config({"task.inputs": "kafka.my.topic", "systems.kafka.streams.my.topic.samza.priority": "1"})
    )
    assert settings.priorities == {SystemStream("kafka", "my.topic"): 1}


@pytest.mark.parametrize(
    "key",
    ["systems.kafka.streams.foo.samza.priority", "task.chooser.priorities.kafka.foo"],
)
@pytest.mark.parametrize("value", ["high", "1.5", ""])
def test_non_integer_priority_names_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"task.inputs": "kafka.foo", key: value}))
    assert info.value.key == key
    assert key in str(info.value)


@pytest.mark.parametrize("value", ["-1", "-50"])
def test_negative_batch_size_names_the_key(value: str) -> None:
    with pytest.raises(ConfigError) as info:
        DefaultChooser.from_config(Config({"task.consumer.batch.size": value}))
    assert info.value.key == "task.consumer.batch.size"


def test_non_integer_batch_size_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"task.consumer.batch.size": "lots"}))
    assert info.value.key == "task.consumer.batch.size"


def test_non_boolean_bootstrap_names_the_key() -> None:
    key = "systems.kafka.streams.foo.samza.bootstrap"
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"task.inputs": "kafka.foo", key: "maybe"}))
    assert info.value.key == key


def test_non_boolean_time_aligned_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"task.chooser.time.aligned": "sometimes"}))
    assert info.value.key == "task.chooser.time.aligned"


@pytest.mark.parametrize(
    "key, value",
    [
        ("systems.kafka.streams.other.samza.priority", "1"),
        ("task.chooser.priorities.kafka.other", "1"),
        ("systems.kafka.streams.other.samza.bootstrap", "true"),
        ("systems.other.streams.foo.samza.priority", "1"),
    ],
)
def test_priority_or_bootstrap_stream_must_be_an_input(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"task.inputs": "kafka.foo", key: value}))
    assert info.value.key == key
    # Also when the inputs are given instead of read from task.inputs.
    with pytest.raises(ConfigError) as info:
        DefaultChooser.from_config(Config({key: value}), {}, inputs=[FOO])
    assert info.value.key == key


def test_without_any_inputs_a_priority_stream_is_an_error() -> None:
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"systems.kafka.streams.foo.samza.priority": "1"}))
    assert info.value.key == "systems.kafka.streams.foo.samza.priority"


def test_bootstrap_false_on_a_non_input_is_harmless() -> None:
    settings = read_chooser_settings(
        Config({"task.inputs": "kafka.foo", "systems.kafka.streams.other.samza.bootstrap": "false"})
    )
    assert settings.bootstrap_streams == frozenset()
    assert not settings.uses_priority


def test_given_inputs_override_task_inputs_and_may_be_names() -> None:
    settings = read_chooser_settings(
        Config({"task.inputs": "kafka.foo", "systems.kafka.streams.bar-baz.samza.priority": "1"}),
        inputs=["kafka.bar-baz"],
    )
    assert settings.inputs == (BAR_BAZ,)


def test_malformed_task_inputs_names_the_key() -> None:
    with pytest.raises(ConfigError) as info:
        read_chooser_settings(Config({"task.inputs": "kafka.foo,nodot"}))
    assert info.value.key == "task.inputs"


def test_tiers_rule() -> None:
    settings = read_chooser_settings(
        Config(
            {
                "task.inputs": "kafka.a,kafka.b,kafka.c,kafka.d,kafka.e",
                "systems.kafka.streams.b.samza.priority": "4",
                "systems.kafka.streams.c.samza.bootstrap": "true",
                # A bootstrap stream with an explicit priority keeps it.
                "systems.kafka.streams.d.samza.bootstrap": "true",
                "systems.kafka.streams.d.samza.priority": "2",
                "systems.kafka.streams.e.samza.priority": "-3",
            }
        )
    )
    assert settings.bootstrap_priority == 5
    assert settings.tiers() == {
        SystemStream("kafka", "a"): 0,
        SystemStream("kafka", "b"): 4,
        SystemStream("kafka", "c"): 5,
        SystemStream("kafka", "d"): 2,
        SystemStream("kafka", "e"): -3,
    }


def test_bootstrap_priority_without_explicit_priorities_is_one() -> None:
    settings = read_chooser_settings(
        Config({"task.inputs": "kafka.a,kafka.b", "systems.kafka.streams.a.samza.bootstrap": "true"})
    )
    assert settings.tiers() == {SystemStream("kafka", "a"): 1, SystemStream("kafka", "b"): 0}


def test_no_priorities_means_no_tiers() -> None:
    assert read_chooser_settings(Config({"task.inputs": "kafka.a"})).tiers() == {}
