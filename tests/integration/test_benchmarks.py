"""Every benchmark of benchmarks/ at a tiny size: it runs to its end and its output checks run (a
benchmark whose output differs from its baseline's raises OutputMismatch). The Spark and Kafka ones are in
tests/integration/spark and tests/integration/kafka (the session's SparkSession and broker), the dashboard's
in tests/notebook, the soak's in test_soak_benchmark.py."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.integration.benchmark_scripts import benchmark, checks

__all__ = ["checks"]  # the fixture, imported to be used here

ROOT = Path(__file__).resolve().parents[2]
PERF_COUNTER = time.perf_counter


def test_output_check_names_what_differs() -> None:
    output_check = benchmark("output_check")
    with pytest.raises(output_check.OutputMismatch, match=r"counts: at key 'b': got 3, expected 2"):
        output_check.same("counts", {"a": 1, "b": 3}, {"a": 1, "b": 2})
    with pytest.raises(output_check.OutputMismatch, match=r"sent: at index 1 of 3: got 5, expected 4"):
        output_check.same("sent", [2, 5, 6], [2, 4, 6])
    with pytest.raises(output_check.OutputMismatch, match=r"sent: got 2 items, expected 3"):
        output_check.same("sent", [2, 4], [2, 4, 6])


def test_core(checks: list[str]) -> None:
    assert benchmark("core").main(["--messages", "800", "--async-messages", "200", "--runs", "1"]) == 0
    for task in ("MapFilter", "MapFilterTo"):
        for partitions in (1, 8):
            assert f"(e) {task}, {partitions} partition(s): the values sent" in checks
    assert checks.count("messages processed") == 16  # (c) 1, (i) 1, (h) 2, (a) 2, (b) 2, (e) 4, (f) 2, (g) 2


def test_instructions(checks: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    instructions = benchmark("instructions")
    labels = tmp_path / "labels.json"
    argv = ["--messages", "300", "--async-messages", "100"]
    # the counted process's part, without callgrind: each workload's runs, checked
    assert instructions.main([*argv, "--child", str(labels)]) == 0
    assert time.perf_counter is PERF_COUNTER, "the slices' clock runs again after the child"
    assert len(json.loads(labels.read_text())) == 2 * len(instructions.WORKLOADS)
    assert checks.count("DuckDB count: messages processed") == 3
    capsys.readouterr()
    assert instructions.main([*argv, "--valgrind", "no-such-valgrind"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "instructions per message: skipped, valgrind is not installed (apt-get install valgrind)"
    ]


def test_choosers(checks: list[str]) -> None:
    assert benchmark("choosers").main(["--messages", "400", "--runs", "1"]) == 0
    assert len(checks) == 2


def test_state(checks: list[str]) -> None:
    assert benchmark("state").main(["--messages", "3000", "--keys", "40", "--runs", "1"]) == 0
    assert checks.count("DictCount: the final count of every key") == 3
    assert checks.count("StoreCount: the final count of every key") == 4  # with the warm-up


def test_state_layers(checks: list[str]) -> None:
    argv = ["--messages", "3000", "--keys", "40", "--runs", "1", "--rows", "2000", "--operations", "2000"]
    assert benchmark("state_layers").main(argv) == 0
    assert sum("the final count of every key" in c for c in checks) == 5  # the dict and 4 store variants
    assert sum("the changelog's last value of every key" in c for c in checks) == 1
    for what in ("write_pending: the rows after upserts and deletes", "get_all without mirror"):
        assert what in checks


def test_log(checks: list[str]) -> None:
    assert benchmark("log").main(["--messages", "500", "--batch", "100", "--runs", "1"]) == 0
    assert checks.count("durable log: the values read back") == 2  # fixed and varied sizes


def test_operators(checks: list[str]) -> None:
    argv = ["--messages", "3000", "--keys", "7", "--window", "1000", "--runs", "1"]
    assert benchmark("operators").main(argv) == 0
    panes = Counter(c.split(":")[0] for c in checks if c.endswith("the panes (window start, user, count)"))
    assert panes == {"app": 2, "one-hop": 3, "two-hop": 1, "app-log": 1}  # the warm-up, a baseline each


def test_record(checks: list[str]) -> None:
    assert benchmark("record").main(["--messages", "400", "--async-messages", "100", "--runs", "1"]) == 0
    assert checks.count("messages processed") == 9  # plain, recorded, replayed x 3 workloads


def test_live_queries(checks: list[str]) -> None:
    argv = ["--messages", "200000", "--users", "50", "--windows", "2", "--window", "0.2", "--rate", "50"]
    figures = benchmark("live_queries").main(argv)
    assert figures["lookups"] > 0 and figures["p99"] >= figures["p50"] > 0
    assert checks == ["each user's committed count after the stop"]


def test_cold_start(checks: list[str]) -> None:
    benchmark("cold_start").main(["--runs", "1", "--lines", "30"])
    assert checks.count("the word count's output") == 3  # warm-up, the run, the -X importtime run


def test_spark_parts_name_runnable_scripts() -> None:
    """benchmarks/spark.py runs each part as its own process (its own SparkSession; the parts' smoke tests
    are in tests/integration/spark): every part's script exists and takes the part's options."""
    for part, (script, *options) in benchmark("spark").PARTS.items():
        command = [sys.executable, str(ROOT / "benchmarks" / script), *options, "--help"]
        run = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert run.returncode == 0 and "usage:" in run.stdout, (part, run.stderr)
