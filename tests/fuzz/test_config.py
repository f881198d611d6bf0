"""Config files (``.properties``, TOML), ``--set`` overrides and the typed reading of every catalogued key:
a Config, or a ConfigError naming what is wrong (unknown keys, bad types, huge values, bytes that are not
text)."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from samza_nb.checkpoint.stream_format import CheckpointFormat
from samza_nb.config import Config, load_config, unknown_key_warnings
from samza_nb.config.catalogue import KEYS
from samza_nb.config.loaders import parse_properties
from samza_nb.coordinator.job_model import JobModel
from samza_nb.operators.plan import ApplicationPlan
from samza_nb.runtime.cli.main import load_job_config
from samza_nb.serde import serde_for
from tests.fuzz.budget import fuzz, parses
from tests.fuzz.strategies import argv_text, json_values

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
