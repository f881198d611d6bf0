"""A pytest plugin for ``make reliability``: one JSON line per test into ``$SAMZA_NB_RELIABILITY_DIR``.

Loaded with ``-p tests.reliability_plugin`` (never by the plain suite). Each finished test adds
``{"nodeid", "outcome", "seconds", "examples"}`` to ``<dir>/<SAMZA_NB_RELIABILITY_PHASE>.jsonl``;
``examples`` is the number of examples hypothesis tried (every phase, with ``--hypothesis-show-statistics``)
or null for a test that is not a property.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

_CASES = re.compile(r"(\d+) passing, (\d+) failing, and (\d+) invalid test cases")


def examples_tried(statistics: str | None) -> int | None:
    """Examples hypothesis ran, summed over its phases, from its statistics text; None without any."""
    if not statistics:
        return None
    counts = [sum(int(n) for n in found) for found in _CASES.findall(statistics)]
    return sum(counts) if counts else None


class _Recorder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.started: dict[str, float] = {}
        path.parent.mkdir(parents=True, exist_ok=True)

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        failed_setup = report.when == "setup" and not report.passed
        if report.when == "call" or failed_setup:
            outcome = "skipped" if report.skipped else report.outcome
            line = {"nodeid": report.nodeid, "outcome": outcome, "seconds": round(report.duration, 3)}
            line["examples"] = dict(report.user_properties).get("hypothesis_examples")
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line) + "\n")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[Any]) -> Any:
        outcome = yield
        report = outcome.get_result()
        if call.when == "call":
            examples = examples_tried(getattr(item, "hypothesis_statistics", None))
            report.user_properties.append(("hypothesis_examples", examples))


def pytest_configure(config: pytest.Config) -> None:
    """Register the recorder when ``SAMZA_NB_RELIABILITY_DIR`` is set."""
    directory = os.environ.get("SAMZA_NB_RELIABILITY_DIR")
    if directory:
        phase = os.environ.get("SAMZA_NB_RELIABILITY_PHASE", "tests")
        config.pluginmanager.register(_Recorder(Path(directory) / f"{phase}.jsonl"), "samza-reliability")
