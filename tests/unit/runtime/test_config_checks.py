"""Every runner of the Python API checks its config once, as ``samza-nb run`` does
(samza_nb.runtime.config_check): a misspelt key, class path or serde name is refused before anything
runs, in one line naming the key and what it most likely meant."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.errors import ConfigError
from samza_nb.runtime import LocalJobRunner
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.testing import TestRunner

MISTAKES = [
    (
        "stores.totals.changelg",
        "kafka.totals",
        "unknown key stores.totals.changelg: did you mean stores.totals.changelog?",
    ),
    (
        "stores.totals.factory",
        "samza_nb.storage.duckdb.DuckDBStoreFactori",
        "stores.totals.factory='samza_nb.storage.duckdb.DuckDBStoreFactori' cannot be imported",
    ),
    ("stores.totals.key.serde", "strng", "stores.totals.key.serde='strng' is not a serde"),
]


class Task:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


def job(tmp_path: Path, key: str, value: str) -> Config:
    return Config(
        {
            "job.name": "checked",
            "task.inputs": "mem.in",
            "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            "job.logged.store.base.dir": str(tmp_path / "state"),
            key: value,
        }
    )


@pytest.mark.parametrize(("key", "value", "message"), MISTAKES)
def test_local_job_runner_refuses_at_construction(tmp_path: Path, key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        LocalJobRunner(job(tmp_path, key, value), Task)
    assert str(info.value).startswith(message) and info.value.key == key
    assert "did you mean" in str(info.value)


@pytest.mark.parametrize(("key", "value", "message"), MISTAKES)
def test_spark_job_runner_refuses_at_construction(tmp_path: Path, key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        SparkJobRunner(job(tmp_path, key, value).with_overrides({"task.class": f"{__name__}.Task"}))
    assert str(info.value).startswith(message) and info.value.key == key
    assert "did you mean" in str(info.value)


@pytest.mark.parametrize(("key", "value", "message"), MISTAKES)
def test_test_runner_refuses_at_run(key: str, value: str, message: str) -> None:
    runner = TestRunner(Task).add_input("in", ["a"]).add_config({key: value})
    with pytest.raises(ConfigError) as info:
        runner.run()
    assert str(info.value).startswith(message) and info.value.key == key
    assert "did you mean" in str(info.value)
