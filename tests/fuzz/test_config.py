"""Config files (``.properties``, TOML), ``--set`` overrides and the typed reading of every catalogued key:
a Config, or a ConfigError naming what is wrong (unknown keys, bad types, huge values, bytes that are not
text). Valid files, overrides, values, serde names and plans load to the same values and round-trip."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from samza_nb.api.job_model import JobModel
from samza_nb.checkpoint.stream_format import CheckpointFormat
from samza_nb.config import Config, load_config, unknown_key_warnings
from samza_nb.config.catalogue import KEYS
from samza_nb.config.loaders import parse_properties
from samza_nb.operators.plan import ApplicationPlan
from samza_nb.runtime.cli.main import load_job_config
from samza_nb.serde import serde_for
from samza_nb.serde.builtin import (
    BytesSerde,
    DoubleSerde,
    IntSerde,
    JsonSerde,
    LongSerde,
    PickleSerde,
    StringSerde,
)
from tests.fuzz.budget import fuzz, parses, valid_inputs
from tests.fuzz.strategies import argv_text, json_values
from tests.fuzz.valid import (
    application_plans,
    as_properties,
    as_toml,
    property_keys,
    property_values,
    valid_configs,
)

CATALOGUED = sorted({re.sub(r"<[a-z]+>", "x", spec.pattern) for spec in KEYS})
"""One concrete key of every catalogued pattern (each placeholder filled with ``x``)."""

odd_values = st.one_of(
    st.text(max_size=30),
    st.integers().map(str),
    st.sampled_from(["9" * 5000, "-1", "1e9", "0x10", " 7 ", "true", "nan", "\x00", "١٢", "²", "a.b.C"]),
)
keys = st.one_of(st.sampled_from(CATALOGUED), st.text(min_size=1, max_size=30))


def _typed_reads(config: Config) -> None:
    for key in config:
        for read in (config.value, config.get_int, config.get_bool, config.get_list, config.require):
            parses(read, key)
    parses(unknown_key_warnings, config, strict=True)
    parses(CheckpointFormat.from_config, config)
    config.job_name()
    config.job_id()


@fuzz
@given(text=st.text(max_size=300))
@example(text="a=1\\")
@example(text="\\\n=")
def test_properties_text(text: str) -> None:
    parses(parse_properties, text, "job.properties")


@pytest.mark.parametrize("suffix", [".properties", ".toml"])
@fuzz
@given(data=st.one_of(st.binary(max_size=300), st.text(max_size=300).map(str.encode)))
@example(data=b"job.name=\xff")
@example(data=b"a = [[[[[[" + b"[" * 5000)
def test_config_file(suffix: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"job{suffix}"
        path.write_bytes(data)
        config = parses(load_config, path)
        if config is not None:
            _typed_reads(config)


@fuzz
@given(
    overrides=st.lists(
        st.one_of(argv_text, st.tuples(keys, st.one_of(odd_values, argv_text)).map("=".join)), max_size=5
    ),
    strict=st.booleans(),
)
@example(overrides=["job.name=\udcff"], strict=False)
def test_set_overrides(overrides: list[str], strict: bool) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "job.properties"
        path.write_text("job.name=fuzz\ntask.class=samza_nb.api.task.StreamTask\n")
        config = parses(load_job_config, str(path), overrides, strict)
        if config is not None:
            _typed_reads(config)
            job_model = JobModel({}, config).to_json().encode("utf-8")  # what the coordinator serves
            assert JobModel.from_json(job_model).config == dict(config)


@fuzz
@given(data=st.dictionaries(keys, st.one_of(odd_values, json_values), max_size=6))
def test_config_values(data: dict[str, object]) -> None:
    """Configs as TOML or a dict give them: values of any type under known and unknown keys."""
    config = parses(Config, data)
    if config is not None and parses(config.validate) is not None:
        _typed_reads(config)


@fuzz
@given(name=st.one_of(st.text(max_size=20), st.text(max_size=10).map("samza_nb_fuzz_absent.{}".format)))
def test_serde_names(name: str) -> None:
    """Serde names from config (dotted ones only under a module that does not exist: no imports run)."""
    parses(serde_for, name, "systems.kafka.samza.msg.serde")


plan_stream = st.fixed_dictionaries(
    {},
    optional={
        name: json_values
        for name in ("id", "system", "stream", "partitions", "intermediate", "producers", "output")
    },
)


@fuzz
@given(
    text=st.one_of(
        st.text(max_size=100),
        st.fixed_dictionaries(
            {"streams": st.one_of(st.lists(plan_stream, max_size=3), json_values)},
            optional={"stages": json_values, "stage": json_values},
        ).map(json.dumps),
    )
)
@example(
    text='{"streams":[{"id":"a","system":"s","stream":"t","partitions":Infinity}],"stages":[],"stage":null}'
)
@example(text="[" * 5000)
def test_application_plan(text: str) -> None:
    """``app.plan``: the plan the planner writes into a split application's config."""
    parses(ApplicationPlan.from_json, text)


# -- valid inputs: what the formats hold parses, to the same values ----------------------------------

COMMENTS = "# a comment\n! another\n\n"

SERDE_NAMES = {
    "string": StringSerde, "json": JsonSerde, "bytes": BytesSerde, "int": IntSerde, "long": LongSerde,
    "double": DoubleSerde, "pickle": PickleSerde, "integer": IntSerde, "byte": BytesSerde,
    "bytebuffer": BytesSerde,
}  # fmt: skip
SAMZA_SERDE_FACTORIES = {
    "org.apache.samza.serializers.StringSerdeFactory": StringSerde,
    "org.apache.samza.serializers.JsonSerdeFactory": JsonSerde,
    "org.apache.samza.serializers.JsonSerdeV2Factory": JsonSerde,
    "org.apache.samza.serializers.ByteSerdeFactory": BytesSerde,
    "org.apache.samza.serializers.ByteBufferSerdeFactory": BytesSerde,
    "org.apache.samza.serializers.IntegerSerdeFactory": IntSerde,
    "org.apache.samza.serializers.LongSerdeFactory": LongSerde,
    "org.apache.samza.serializers.DoubleSerdeFactory": DoubleSerde,
}


def _check_typed(config: Config, drawn: list[tuple[str, str, Any]]) -> None:
    for key, text, typed in drawn:
        assert config.get_str(key) == text, key
        assert config.value(key) == typed, key


@valid_inputs
@given(values=st.dictionaries(property_keys, property_values, max_size=6))
def test_valid_properties_round_trip(values: dict[str, str]) -> None:
    """``key = value`` lines (comments and blank lines between) parse to the same keys and values, and
    parse -> write -> parse gives them again."""
    parsed = parse_properties(COMMENTS + as_properties(values) + COMMENTS, "job.properties")
    assert parsed == values
    assert parse_properties(as_properties(parsed), "job.properties") == values


@pytest.mark.parametrize("suffix", [".properties", ".toml"])
@valid_inputs
@given(drawn=valid_configs)
def test_valid_config_files_load(suffix: str, drawn: list[tuple[str, str, Any]]) -> None:
    """A config file of catalogued keys with values of their types loads (validated) to the same values,
    read back typed; written again and loaded, it is the same config."""
    write = as_properties if suffix == ".properties" else as_toml
    values = {key: text for key, text, _ in drawn}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"job{suffix}"
        path.write_text(write(values), encoding="utf-8")
        config = load_config(path)
        assert dict(config) == values
        _check_typed(config, drawn)
        path.write_text(write(dict(config)), encoding="utf-8")
        assert dict(load_config(path)) == values


@valid_inputs
@given(drawn=valid_configs)
def test_valid_set_overrides_apply(drawn: list[tuple[str, str, Any]]) -> None:
    """``--set KEY=VALUE`` of catalogued keys with values of their types: each is in the config, typed,
    and the job model the coordinator serves carries the config unchanged."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "job.properties"
        path.write_text("job.name=fuzz\ntask.class=samza_nb.api.task.StreamTask\n")
        config = load_job_config(str(path), [f"{key}={text}" for key, text, _ in drawn], True)
    _check_typed(config, drawn)
    job_model = JobModel({}, config).to_json().encode("utf-8")
    assert JobModel.from_json(job_model).config == dict(config)


@valid_inputs
@given(drawn=valid_configs)
def test_valid_config_values(drawn: list[tuple[str, str, Any]]) -> None:
    """A dict of typed values (ints, bools, lists as TOML gives them) is a Config that validates and reads
    them back."""
    config = Config({key: typed for key, _, typed in drawn}).validate()
    for key, _, typed in drawn:
        assert config.value(key) == typed, key


@valid_inputs
@given(
    name=st.one_of(
        st.sampled_from(sorted(SERDE_NAMES)).flatmap(lambda n: st.sampled_from([n, n.upper(), n.title()])),
        st.sampled_from(sorted(SAMZA_SERDE_FACTORIES)),
    )
)
def test_valid_serde_names(name: str) -> None:
    """Every built-in serde name (any letter case), Samza's aliases and Samza's serde factory class
    names give the serde they stand for."""
    expected = SAMZA_SERDE_FACTORIES.get(name) or SERDE_NAMES[name.lower()]
    assert type(serde_for(name, "systems.kafka.samza.msg.serde")) is expected


@valid_inputs
@given(plan=application_plans())
def test_valid_application_plans_round_trip(plan: ApplicationPlan) -> None:
    """A plan as the planner writes it reads back as the same plan, and writes the same JSON again."""
    text = plan.to_json()
    read = ApplicationPlan.from_json(text)
    assert read == plan
    assert read.to_json() == text
