"""Resets keep outputs and state in agreement (the reset table of docs/how-to/operating.md):
``reset.offset`` on an input that is not a bootstrap stream starts over (running totals from zero,
outputs in a new generation); on a bootstrap stream it re-reads that table into the state kept,
outputs in the current generation; ``samza-nb reset``'s ``reset_job`` starts over too."""

from __future__ import annotations

import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.spark import read_output
from tests.integration.spark.runner_tasks import RunningTotal

TASKS = "tests.integration.spark.runner_tasks"
CUSTOMERS = ("ann", "bob", "cid")


def orders(start: int, count: int) -> list[str]:
    return [f"{CUSTOMERS[i % 3]} {i % 7 + 1}" for i in range(start, start + count)]


def expected_totals(lines: list[str]) -> dict[int, int]:
    """Order number → its customer's running total after it, from an empty state."""
    totals: Counter[str] = Counter()
    result = {}
    for number, line in enumerate(lines):
        customer, amount = line.split()
        totals[customer] += int(amount)
        result[number] = totals[customer]
    return result


def job(tmp_path: Path, name: str, **extra: str) -> Config:
    values = {
        "job.name": name,
        "task.class": f"{TASKS}.RunningTotal",
        "task.inputs": "file.customers,file.orders",
        "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
        "systems.file.streams.customers.path": str(tmp_path / "customers.txt"),
        "systems.file.streams.orders.path": str(tmp_path / "orders.txt"),
        "systems.file.samza.offset.default": "oldest",
        "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
        "stores.totals.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.totals.key.serde": "string",
        "stores.totals.msg.serde": "long",
        "stores.known.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.known.key.serde": "string",
        "stores.known.msg.serde": "long",
        "job.container.count": "1",
        "job.logged.store.base.dir": str(tmp_path / "state"),
        "task.commit.ms": "100",
        "cluster-manager.container.status.interval.ms": "50",
    }
    values.update(extra)
    return Config(values)


def write(tmp_path: Path, customers: list[str], lines: list[str]) -> None:
    (tmp_path / "customers.txt").write_text("".join(f"{c}\n" for c in customers))
    (tmp_path / "orders.txt").write_text("".join(f"{line}\n" for line in lines))


def run_here(config: Config) -> int:
    """The job as one container in this process, writing real Spark outputs (the reset semantics are the
    container's, the same under the Spark runner, whose containers run the same code)."""
    runner = LocalJobRunner(config, RunningTotal)
    runner.run(timeout=60)
    return runner.processed


def totals(spark: Any, config: Config) -> dict[int, list[int]]:
    """Order number → the totals the committed output holds for it."""
    found: dict[int, list[int]] = {}
    for row in read_output(spark, "out", config).collect():
        found.setdefault(int(row["order"]), []).append(int(row["total"]))
    return found


@pytest.mark.timeout(600)
def test_reset_offset_of_an_input_starts_over_its_state_and_outputs(spark: Any, tmp_path: Path) -> None:
    lines = orders(0, 60)
    write(tmp_path, list(CUSTOMERS), lines)
    name = f"totals-{uuid.uuid4().hex[:6]}"
    run_here(job(tmp_path, name))
    expected = {number: [total] for number, total in expected_totals(lines).items()}
    assert totals(spark, job(tmp_path, name)) == expected
    # orders reset: every order again, totals from zero (not continuing the first run's), a new generation
    reset = job(tmp_path, name, **{"systems.file.streams.orders.samza.reset.offset": "true"})
    assert run_here(reset) == len(CUSTOMERS) + len(lines)
    assert totals(spark, reset) == expected


@pytest.mark.timeout(600)
def test_reset_offset_of_a_bootstrap_stream_keeps_state_and_the_generation(
    spark: Any, tmp_path: Path
) -> None:
    lines = orders(0, 30)
    write(tmp_path, ["ann", "bob"], lines)
    name = f"boot-{uuid.uuid4().hex[:6]}"
    bootstrap = {"systems.file.streams.customers.samza.bootstrap": "true"}
    run_here(job(tmp_path, name, **bootstrap))
    # the table gets cid and is re-read (state kept); orders resume after their checkpoint
    more = orders(30, 30)
    write(tmp_path, list(CUSTOMERS), lines + more)
    reset = job(tmp_path, name, **bootstrap, **{"systems.file.streams.customers.samza.reset.offset": "true"})
    assert run_here(reset) == len(CUSTOMERS) + len(more)
    got = totals(spark, reset)
    assert sorted(got) == list(range(60)), "the first run's output is kept: the same generation"
    ann_bob = expected_totals([line for line in lines + more if not line.startswith("cid")])
    ann_bob_orders = [n for n, line in enumerate(lines + more) if not line.startswith("cid")]
    for position, number in enumerate(ann_bob_orders):
        assert got[number] == [ann_bob[position]], "ann's and bob's totals continue from the state kept"
    assert all(got[n] == [-1] for n, line in enumerate(lines) if line.startswith("cid"))
    cid_later = [n for n, line in enumerate(more, start=30) if line.startswith("cid")]
    assert [got[n][0] for n in cid_later] == sorted(got[n][0] for n in cid_later) and got[cid_later[0]][0] > 0


@pytest.mark.timeout(600)
def test_reset_job_starts_over_state_and_outputs(spark: Any, tmp_path: Path) -> None:
    lines = orders(0, 45)
    write(tmp_path, list(CUSTOMERS), lines)
    from samza_nb.runtime.reset import reset_job

    config = job(tmp_path, f"cli-{uuid.uuid4().hex[:6]}")
    run_here(config)
    line = reset_job(config)
    assert "\n" not in line and "reset" in line and "a new generation" in line, line
    assert run_here(config) == len(CUSTOMERS) + len(lines)
    assert totals(spark, config) == {number: [total] for number, total in expected_totals(lines).items()}
