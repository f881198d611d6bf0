"""The check every entry point runs on a job's config (samza_nb.runtime.config_check): class paths that
do not resolve and serde names that no serde has are one-line errors naming the key, the value and what
it most likely meant, when the config is checked (not when the job first uses them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from samza_nb.config import Config
from samza_nb.errors import ConfigError
from samza_nb.runtime.config_check import check_job_config

REPO = Path(__file__).resolve().parents[3]

GOOD = {
    "job.name": "j",
    "task.class": "tests.unit.config.test_config_checks.Task",
    "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
    "stores.s.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "stores.s.key.serde": "string",
    "stores.s.msg.serde": "mine",
    "serializers.registry.mine.class": "samza_nb.serde.builtin.JsonSerde",
    "serializers.registry.samza.class": "org.apache.samza.serializers.JsonSerdeFactory",
    "systems.mem.samza.key.serde": "Integer",
    "systems.mem.streams.a.samza.msg.serde": "samza_nb.serde.builtin.StringSerde",
    "task.chooser.class": "samza_nb.chooser.round_robin.RoundRobinChooser",
}


class Task:
    def process(self, envelope: object, collector: object, coordinator: object) -> None:
        pass


def refusal(key: str, value: str) -> str:
    """The one-line error of GOOD with ``key`` set to ``value`` (it names ``key``)."""
    with pytest.raises(ConfigError) as info:
        check_job_config(Config({**GOOD, key: value}))
    assert info.value.key == key and "\n" not in str(info.value)
    return str(info.value)


def test_a_config_whose_classes_and_serdes_resolve_passes() -> None:
    check_job_config(Config(GOOD))


@pytest.mark.parametrize(
    ("key", "value", "meant"),
    [
        (
            "systems.x.samza.factory",
            "samza_nb.systems.kafka.KafkaSystemFactor",
            "samza_nb.systems.kafka.KafkaSystemFactory",
        ),
        (
            "systems.mem.samza.factory",
            "samza_nb.systems.inmemry.InMemorySystemFactory",
            "samza_nb.systems.inmemory.InMemorySystemFactory",
        ),
        (
            "stores.s.factory",
            "samza_nb.storage.duckdb.DuckDBStoreFactori",
            "samza_nb.storage.duckdb.DuckDBStoreFactory",
        ),
        (
            "task.class",
            "tests.unit.config.test_config_checks.Tsk",
            "tests.unit.config.test_config_checks.Task",
        ),
        (
            "task.chooser.class",
            "samza_nb.chooser.round_robin.RoundRobinChoser",
            "samza_nb.chooser.round_robin.RoundRobinChooser",
        ),
        (
            "serializers.registry.mine.class",
            "samza_nb.serde.builtin.JsonSerd",
            "samza_nb.serde.builtin.JsonSerde",
        ),
        (
            "task.checkpoint.factory",
            "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactroy",
            "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory",
        ),
        (
            "systems.mem.streams.a.samza.msg.serde",
            "samza_nb.serde.bultin.StringSerde",
            "samza_nb.serde.builtin.StringSerde",
        ),
    ],
)
def test_a_misspelt_class_path_names_the_key_the_value_and_the_path_it_meant(
    key: str, value: str, meant: str
) -> None:
    message = refusal(key, value)
    assert message.startswith(f"{key}={value!r} cannot be imported")
    assert message.endswith(f"; did you mean {meant}?")


@pytest.mark.parametrize(
    ("key", "value", "meant"),
    [
        ("stores.s.key.serde", "strng", "string"),
        ("stores.s.msg.serde", "mien", "mine"),
        ("systems.mem.samza.msg.serde", "jsno", "json"),
        ("systems.mem.streams.a.b.samza.key.serde", "lnog", "long"),
    ],
)
def test_a_serde_name_no_serde_has_names_the_key_and_the_name_it_meant(
    key: str, value: str, meant: str
) -> None:
    assert refusal(key, value).startswith(
        f"{key}={value!r} is not a serde: no serde has that name; did you mean {meant}?"
    )


def test_keys_that_join_others_leave_serde_names_to_the_whole_config() -> None:
    check_job_config({"stores.s.key.serde": "registered"}, whole=False)
    with pytest.raises(ConfigError, match="did you mean samza_nb.systems.kafka.KafkaSystemFactory"):
        check_job_config({"systems.k.samza.factory": "samza_nb.systems.kafka.KafkaSystemFactor"}, whole=False)


def test_checking_class_paths_loads_no_lazy_export_nor_a_heavy_library() -> None:
    """Checking DuckDB's store factory and the Spark system's factory imports neither DuckDB nor Spark."""
    config = {
        "stores.s.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "systems.s.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
        "task.checkpoint.factory": "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory",
    }
    code = (
        "import json, sys\nfrom samza_nb.config import Config\n"
        "from samza_nb.runtime.config_check import check_job_config\n"
        f"check_job_config(Config({config!r}))\n"
        "print(json.dumps(sorted(m for m in ('duckdb', 'pyspark', 'pandas', 'pyarrow') if m in sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
