"""Item 3's resets through ``SparkJobRunner`` (the session's local Spark; its containers are Spark tasks):
``reset.offset`` on ``orders`` starts over (every total of the new generation from an empty state), on the
bootstrap stream ``customers`` it re-reads the table into the state kept, in the current generation."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.runtime.spark.runner import SparkJobRunner
from tests.integration.spark.test_resets import CUSTOMERS, expected_totals, job, orders, totals, write

ROOT = Path(__file__).parents[3]
KEYS = {  # a durable-log changelog, and customers a bootstrap stream (a table)
    "stores.totals.changelog": "log.totals-changelog",
    "systems.file.streams.customers.samza.bootstrap": "true",
}


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The containers import the test tasks from the repository (the driver's sys.path reaches them)."""
    monkeypatch.syspath_prepend(str(ROOT))


def run_spark(spark: Any, config: Config) -> int:
    """Run ``config``'s job to its end on the session's Spark; the messages it processed."""
    runner = SparkJobRunner(config, spark)
    runner.run(timeout=300)
    assert runner.failure is None, runner.failure
    return runner.processed


def from_empty(lines: list[str], start: int = 0) -> dict[int, list[int]]:
    """Order number → [its total] for ``lines`` (numbered from ``start``) from an empty state, ``cid``
    unknown: ann's and bob's running totals, -1 for cid's orders."""
    known = [(n, line) for n, line in enumerate(lines, start=start) if not line.startswith("cid")]
    found = {n: [-1] for n, line in enumerate(lines, start=start) if line.startswith("cid")}
    totals_after = expected_totals([line for _, line in known])
    found.update({n: [totals_after[i]] for i, (n, _) in enumerate(known)})
    return found


@pytest.mark.timeout(900)
def test_resets_through_the_spark_runner(spark: Any, tmp_path: Path) -> None:
    lines = orders(0, 30)
    write(tmp_path, ["ann", "bob"], lines)
    name = f"spark-reset-{uuid.uuid4().hex[:6]}"
    assert run_spark(spark, job(tmp_path, name, **KEYS)) == 2 + len(lines)
    assert totals(spark, job(tmp_path, name, **KEYS)) == from_empty(lines)
    # orders reset: every order again, every total of the new generation from an empty state (not doubled)
    reset = job(tmp_path, name, **KEYS, **{"systems.file.streams.orders.samza.reset.offset": "true"})
    processed = run_spark(spark, reset)
    assert totals(spark, reset) == from_empty(lines)
    assert processed == 2 + len(lines)
    # the table gets cid and is re-read (state kept, the same generation); orders resume after the checkpoint
    more = orders(30, 30)
    write(tmp_path, list(CUSTOMERS), lines + more)
    again = job(tmp_path, name, **KEYS, **{"systems.file.streams.customers.samza.reset.offset": "true"})
    processed = run_spark(spark, again)
    expected = from_empty(lines + more)  # ann's and bob's totals continue from the state kept
    cid = [n for n, line in enumerate(more, start=30) if line.startswith("cid")]
    cid_totals = expected_totals([more[n - 30] for n in cid])  # cid known from the re-read on
    expected.update({n: [cid_totals[i]] for i, n in enumerate(cid)})
    assert totals(spark, again) == expected
    assert processed == len(CUSTOMERS) + len(more), "the table is re-read from its start"
