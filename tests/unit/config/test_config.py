"""Config: Samza key names, defaults, typed getters, loaders and errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from samza_nb import Config, ConfigError
from samza_nb.config import KEYS, load_config, parse_properties


def test_defaults_of_the_run_loop_keys_are_samzas() -> None:
    config = Config({})
    assert config.value("task.max.concurrency") == 1
    assert config.value("task.window.ms") == -1
    assert config.value("task.commit.ms") == 60000
    assert config.value("task.callback.timeout.ms") == -1
    assert config.value("task.max.idle.ms") == 10
    assert config.value("job.container.thread.pool.size") == 0
    assert config.value("task.shutdown.ms") == 30000
    assert config.value("task.async.commit") is False
    assert config.value("task.poll.interval.ms") == 50


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("task.max.concurrency", "abc", "an integer >= 1"),
        ("task.max.concurrency", "0", "an integer >= 1"),
        ("job.container.thread.pool.size", "-1", "an integer >= 0"),
        ("task.async.commit", "perhaps", "true or false"),
        ("systems.kafka.samza.offset.default", "earliest", "oldest, upcoming, newest"),
        ("task.class", "not a path", "dotted path"),
        ("job.systemstreampartition.grouper.factory", "by-key", "group-by-partition"),
    ],
)
def test_a_bad_value_names_the_key_the_value_and_what_is_allowed(key: str, value: str, allowed: str) -> None:
    with pytest.raises(ConfigError) as info:
        Config({key: value}).validate()
    message = str(info.value)
    assert key in message and repr(value) in message and allowed in message
    assert info.value.key == key


def test_typed_getters() -> None:
    config = Config({"a.int": "5", "a.bool": "TRUE", "a.list": "x, y ,,z", "n": 3, "b": False})
    assert config.get_int("a.int") == 5
    assert config.get_bool("a.bool") is True
    assert config.get_list("a.list") == ["x", "y", "z"]
    assert config["n"] == "3" and config["b"] == "false"
    assert config.get_int("missing", 7) == 7
    with pytest.raises(ConfigError, match="missing required config missing"):
        config.require("missing")


def test_config_is_read_only_and_derivable() -> None:
    config = Config({"a": "1"})
    with pytest.raises(TypeError):
        config["a"] = "2"  # type: ignore[index]
    assert config.with_overrides({"a": "2"})["a"] == "2" and config["a"] == "1"
    assert dict(Config({"s.x.a": "1", "s.y": "2", "t": "3"}).subset("s.")) == {"x.a": "1", "y": "2"}


def test_none_values_are_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="task.inputs"):
        Config({"task.inputs": None})


def test_properties_parsing() -> None:
    text = """
    # comment
    ! also a comment
    job.name = wordcount
    task.inputs: file.lines
    long.value = a,\\
        b
    """
    assert parse_properties(text) == {
        "job.name": "wordcount",
        "task.inputs": "file.lines",
        "long.value": "a,b",
    }


def test_a_properties_line_without_separator_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "job.properties"
    path.write_text("job.name = x\nthis is wrong\n")
    with pytest.raises(ConfigError, match=r"job\.properties:2"):
        load_config(path)


def test_load_properties_toml_and_dict(tmp_path: Path) -> None:
    props = tmp_path / "job.properties"
    props.write_text("job.name = a\ntask.max.concurrency = 4\n")
    toml = tmp_path / "job.toml"
    toml.write_text('[job]\nname = "b"\n[task.max]\nconcurrency = 2\n')
    assert load_config(props).value("task.max.concurrency") == 4
    assert load_config(toml)["job.name"] == "b"
    assert load_config(toml).value("task.max.concurrency") == 2
    assert load_config({"job.name": "c"})["job.name"] == "c"


def test_load_validates(tmp_path: Path) -> None:
    props = tmp_path / "job.properties"
    props.write_text("task.window.ms = soon\n")
    with pytest.raises(ConfigError, match="task.window.ms"):
        load_config(props)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.properties")


def test_the_configuration_reference_is_the_catalogue_with_every_key() -> None:
    from samza_nb.config.catalogue import describe_keys

    table = describe_keys()
    assert [spec.pattern for spec in KEYS if f"| `{spec.pattern}` |" not in table] == []
    assert len(table.splitlines()) == len(KEYS) + 2
    page = (Path(__file__).parents[3] / "docs" / "reference" / "configuration.md").read_text()
    assert "_generated/configuration-keys.md" in page and "| `job.name` |" not in page, "generated, not kept"


def test_job_name_and_id_come_from_the_catalogue_when_unset() -> None:
    from samza_nb.config import default_of, job_id, job_name

    assert Config({}).job_name() == default_of("job.name") == job_name({})
    assert Config({}).job_id() == default_of("job.id") == job_id({})
    assert Config({"job.name": "clicks", "job.id": "7"}).job_name() == "clicks"
    assert job_id({"job.id": "7"}) == "7"
    assert default_of("no.such.key") is None
