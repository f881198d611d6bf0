"""Containers reach the job coordinator with its token when it binds an address other than loopback."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from samza_nb.runtime.spark.runner import SparkJobRunner
from tests.integration.spark.test_runner import ROOT, expected_lines, file_job, recorded


@pytest.fixture(autouse=True)
def importable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The containers import the test tasks from the repository (the driver's sys.path reaches them)."""
    monkeypatch.syspath_prepend(str(ROOT))


def test_with_the_coordinator_host_set_the_containers_carry_its_token(spark: Any, tmp_path: Path) -> None:
    config = file_job(tmp_path, **{"cluster-manager.jobcoordinator.host": "0.0.0.0"})
    runner = SparkJobRunner(config, spark)
    runner.run(timeout=120)
    assert runner.failure is None
    assert runner.coordinator is not None and runner.coordinator.token is not None
    assert Counter(m for *_, m in recorded(tmp_path)) == Counter(expected_lines()), "every line once"
    status = runner.status()
    assert status is not None and sorted(status.reports) == ["0", "1"]
    assert all(r.state == "stopped" for r in status.reports.values())
