"""The reset table (docs/how-to/operating.md) on the standalone cluster: each run is a new driver
(``samza-nb run --runner spark``) whose container lands on a worker that sees only the shared directory,
its stores restored from their Kafka changelogs. ``reset.offset`` on ``orders`` starts over: every total of
the new output generation from an empty state (the changelog starts anew, so no worker restores the old
run's totals); on the bootstrap stream ``customers`` it re-reads the table into the state kept, in the
current generation."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.spark.cluster import SparkCluster
from tests.integration.spark.test_cluster import cluster_job, finish, spark_output, start_driver
from tests.integration.spark.test_resets import CUSTOMERS, expected_totals, orders, totals, write
from tests.integration.spark.test_resets_runner import from_empty

pytestmark = [pytest.mark.spark_cluster, pytest.mark.timeout(600)]


def totals_job(
    cluster: SparkCluster, broker: DevBroker, tmp_path: Path, name: str, **extra: str
) -> dict[str, str]:
    """RunningTotal over the text files in ``<shared>/<name>/`` (``customers`` a bootstrap stream), one
    container, Kafka checkpoints, changelogs and coordinator stream, Spark outputs under the shared dir."""
    config, _ = cluster_job(cluster, broker, tmp_path, **spark_output(cluster, "RunningTotal"))
    inputs = cluster.shared / name
    config.update(
        {
            "job.name": name,
            "job.shared.dir": str(cluster.shared / f"{name}-out"),
            "job.container.count": "1",
            "task.inputs": "file.customers,file.orders",
            "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
            "systems.file.streams.customers.path": str(inputs / "customers.txt"),
            "systems.file.streams.orders.path": str(inputs / "orders.txt"),
            "systems.file.samza.offset.default": "oldest",
            "systems.file.streams.customers.samza.bootstrap": "true",
            "stores.totals.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.totals.key.serde": "string",
            "stores.totals.msg.serde": "long",
            "stores.totals.changelog": f"kafka.{name}-totals-changelog",
            "stores.known.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.known.key.serde": "string",
            "stores.known.msg.serde": "long",
            "stores.known.changelog": f"kafka.{name}-known-changelog",
            "task.commit.ms": "100",
            **extra,
        }
    )
    return config


def run_on_cluster(config: dict[str, str], tmp_path: Path, cluster: SparkCluster) -> None:
    status, _, err = finish(start_driver(config, tmp_path), cluster)
    assert status == 0, err[-4000:]
    assert cluster.containers() == []


def test_resets_on_the_cluster_keep_state_and_outputs_in_agreement(
    spark: Any, spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    name = f"cluster-reset-{uuid.uuid4().hex[:6]}"
    inputs = spark_cluster.shared / name
    inputs.mkdir()
    lines = orders(0, 30)
    write(inputs, ["ann", "bob"], lines)
    first = totals_job(spark_cluster, cluster_kafka, tmp_path, name)
    run_on_cluster(first, tmp_path, spark_cluster)
    assert totals(spark, Config(first)) == from_empty(lines)
    # orders reset on a new driver: every order again, every total from an empty state, a new generation
    reset = totals_job(
        spark_cluster,
        cluster_kafka,
        tmp_path,
        name,
        **{"systems.file.streams.orders.samza.reset.offset": "true"},
    )
    run_on_cluster(reset, tmp_path, spark_cluster)
    assert totals(spark, Config(reset)) == from_empty(lines), "totals of the new generation continue the old"
    # the table gets cid and is re-read (state kept: restored from the changelog on whichever worker), the
    # same generation; orders resume after their checkpoint
    more = orders(30, 30)
    write(inputs, list(CUSTOMERS), lines + more)
    again = totals_job(
        spark_cluster,
        cluster_kafka,
        tmp_path,
        name,
        **{"systems.file.streams.customers.samza.reset.offset": "true"},
    )
    run_on_cluster(again, tmp_path, spark_cluster)
    expected = from_empty(lines + more)
    cid = [n for n, line in enumerate(more, start=30) if line.startswith("cid")]
    cid_totals = expected_totals([more[n - 30] for n in cid])
    expected.update({n: [cid_totals[i]] for i, n in enumerate(cid)})
    assert totals(spark, Config(again)) == expected


def test_a_store_without_a_changelog_is_refused_on_the_cluster_before_anything_runs(
    spark_cluster: SparkCluster, cluster_kafka: DevBroker, tmp_path: Path
) -> None:
    """State only on a worker's disk would be lost with the worker: refused in one line naming the key."""
    name = f"cluster-nolog-{uuid.uuid4().hex[:6]}"
    config = totals_job(spark_cluster, cluster_kafka, tmp_path, name)
    del config["stores.totals.changelog"]
    status, _, err = finish(start_driver(config, tmp_path), spark_cluster)
    lines = [line for line in err.splitlines() if line.strip() and "WARN" not in line]
    assert status == 2 and len(lines) == 1, err[-4000:]
    assert "store totals has no changelog" in lines[0] and "stores.totals.changelog" in lines[0]
    assert spark_cluster.containers() == []
