"""Under a cluster master, what executors on other machines cannot reach is refused before anything starts,
each problem one ConfigError naming the key; a local master accepts the single-machine defaults."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, ConfigError
from samza_nb.runtime.spark.placement import check_cluster_placement, with_absolute_base_dir
from samza_nb.systems.log.wake import FlushWaiter

CLUSTER = "spark://10.1.2.3:7077"
KAFKA_JOB = {
    "job.name": "placed",
    "task.inputs": "kafka.clicks",
    "systems.kafka.samza.factory": "samza_nb.systems.kafka.KafkaSystemFactory",
    "systems.kafka.bootstrap.servers": "127.0.0.1:9092",
    "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
    "job.default.system": "kafka",
    "task.checkpoint.factory": "samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory",
    "task.checkpoint.system": "kafka",
    "job.shared.dir": "/mnt/shared",
    "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "stores.counts.changelog": "kafka.counts-changelog",
}


def refused(**changes: Any) -> str:
    """The key of the ConfigError the job with ``changes`` (None: the key removed) gets on a cluster."""
    values = {**KAFKA_JOB, **{k: v for k, v in changes.items() if v is not None}}
    for key, value in changes.items():
        if value is None:
            values.pop(key.replace("__", "."), None)
    with pytest.raises(ConfigError) as raised:
        check_cluster_placement(Config(values), CLUSTER)
    assert "\n" not in str(raised.value)
    assert raised.value.key is not None
    return raised.value.key


def test_a_kafka_job_with_a_shared_dir_is_accepted_on_a_cluster_and_defaults_on_a_local_master() -> None:
    check_cluster_placement(Config(KAFKA_JOB), CLUSTER)
    local = {"job.name": "local", "task.inputs": "log.words", "job.container.count": "2"}
    check_cluster_placement(Config(local), "local[2,4]")


def test_each_single_machine_default_is_refused_naming_its_key() -> None:
    assert refused(**{"job__shared__dir": None}) == "job.shared.dir"
    duckdb = "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory"
    assert refused(**{"task.checkpoint.factory": duckdb}) == "task.checkpoint.factory"
    assert refused(**{"task__checkpoint__factory": None}) == "task.checkpoint.factory"  # the log's default
    assert refused(**{"stores.counts.changelog": "log.counts-changelog"}) == "stores.counts.changelog"
    assert refused(**{"task.inputs": "log.words"}) == "task.inputs"
    assert refused(**{"job.default.system": "log", "stores.counts.changelog": "kafka.c"}) == (
        "job.coordinator.system"
    )


def test_a_relative_base_dir_is_made_absolute_against_the_drivers_directory(tmp_path: Path) -> None:
    made = with_absolute_base_dir(Config({"job.logged.store.base.dir": "state"}))
    assert made["job.logged.store.base.dir"] == str(Path("state").absolute())
    default = with_absolute_base_dir(Config({}))
    assert Path(default["job.logged.store.base.dir"]).is_absolute()
    given = Config({"job.logged.store.base.dir": str(tmp_path)})
    assert with_absolute_base_dir(given) is given


def test_a_waiter_for_writers_on_other_machines_looks_again_long_before_its_timeout(tmp_path: Path) -> None:
    mark = tmp_path / "mark"
    mark.write_bytes(b"0")
    waiter = FlushWaiter([mark], remote_writers=True)
    try:
        timeout = 5.0
        began = time.monotonic()
        assert waiter.wait(timeout) is False  # nothing written here: it returns to look again
        assert time.monotonic() - began < timeout / 2
    finally:
        waiter.close()


def test_a_store_without_a_changelog_is_refused_on_a_cluster_before_a_session_starts() -> None:
    assert refused(stores__counts__changelog=None) == "stores.counts.changelog"
    values = {k: v for k, v in KAFKA_JOB.items() if k != "stores.counts.changelog"}
    check_cluster_placement(Config(values), "local[2,2]")  # one machine: the local disk stays
    from samza_nb.runtime.spark.runner import SparkJobRunner

    runner = SparkJobRunner(Config({**values, "spark.master": CLUSTER}))
    with pytest.raises(ConfigError) as raised:
        runner.start()
    line = str(raised.value)
    assert line.startswith("store counts has no changelog: under the cluster master spark://10.1.2.3:7077")
    assert line.endswith("set stores.counts.changelog = <Kafka system>.<topic>")
    assert runner.spark is None, "refused before a SparkSession started"
