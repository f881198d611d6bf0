"""scripts/reliability.py: the table is made from what the run recorded, and a failure is a failure."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("reliability", ROOT / "scripts" / "reliability.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["reliability"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def write_lines(path: Path, lines: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def outcome(point: str, lost: int = 0, duplicates: int = 0) -> dict[str, object]:
    return {
        "point": point,
        "scenario": "stateful count",
        "messages": 2000,
        "lost": lost,
        "duplicates": duplicates,
        "exact": True,
        "guarantee": "exactly-once state",
    }


def result(nodeid: str, outcome: str = "passed", examples: int | None = None) -> dict[str, object]:
    return {"nodeid": nodeid, "outcome": outcome, "seconds": 1.25, "examples": examples}


def soak() -> dict[str, object]:
    return {
        "messages": 5_000_000,
        "live_keys": 100_000,
        "seconds": 60.0,
        "msgs_per_s": 83_333.3,
        "rss_mb_10": 200.0,
        "rss_mb_100": 204.0,
        "rss_growth": 0.02,
        "fds_10": 30,
        "fds_100": 30,
        "state_bytes_10": 10 * 2**20,
        "state_bytes_100": 11 * 2**20,
        "state_bytes_bound": 31 * 2**20,
        "wal_bytes_10": 9 * 2**20,
        "wal_bytes_100": 5 * 2**20,
        "state_bytes_final": 11 * 2**20,
        "store_keys": 100_000,
        "changelog_bytes_100": 120 * 2**20,
        "passed": True,
    }


def record_all_passing(out: Path) -> None:
    runs = [outcome("commit.state-written", duplicates=d) for d in (0, 1, 2)]
    write_lines(out / "crash_points.jsonl", runs)
    write_lines(out / "crash.jsonl", [result("tests/faults/test_commit_points.py::test_commit[state]")])
    write_lines(out / "files.jsonl", [result("tests/unit/systems/log/test_recovery.py::test_a_torn_tail")])
    write_lines(
        out / "fuzz.jsonl",
        [result(f"tests/fuzz/test_serdes.py::test_from_bytes[{name}]", examples=104) for name in ("a", "b")],
    )
    write_lines(out / "kafka.jsonl", [result("tests/integration/kafka/test_broker_loss.py::test_killed")])
    (out / "soak.json").write_text(json.dumps(soak()), encoding="utf-8")


def test_all_passing_is_a_table_of_what_was_recorded(report: ModuleType, tmp_path: Path) -> None:
    record_all_passing(tmp_path)
    table, ok = report.render(tmp_path, 3, {"crash": 100.0, "soak": 60.0})
    assert ok, table
    assert "| `commit.state-written` | stateful count | 3 of 3 | 2,000 | 0 | 0, 1, 2 | exact |" in table
    assert "| serdes: from bytes | 2 | 208 | passed |" in table
    assert "| broker_loss: killed | passed | 1.2 |" in table
    assert "| RSS (MiB) | 200 | 204 | +2.0% |" in table
    assert "2.7 minutes" in table and "FAILED" not in table
    assert "Machine: " in table and "CPUs" in table


@pytest.mark.parametrize("damage", ["lost", "missing run", "failed test", "failed fuzz", "no soak", "soak"])
def test_any_failure_fails_the_report(report: ModuleType, tmp_path: Path, damage: str) -> None:
    record_all_passing(tmp_path)
    if damage == "lost":
        write_lines(tmp_path / "crash_points.jsonl", [outcome("commit.state-written", lost=1)] * 3)
    elif damage == "missing run":
        write_lines(tmp_path / "crash_points.jsonl", [outcome("commit.state-written")] * 2)
    elif damage == "failed test":
        write_lines(tmp_path / "crash.jsonl", [result("tests/faults/test_x.py::test_y", "failed")])
    elif damage == "failed fuzz":
        write_lines(tmp_path / "fuzz.jsonl", [result("tests/fuzz/test_s.py::test_p[a]", "failed", 3)])
    elif damage == "no soak":
        (tmp_path / "soak.json").unlink()
    else:
        (tmp_path / "soak.json").write_text(json.dumps(soak() | {"passed": False}), encoding="utf-8")
    table, ok = report.render(tmp_path, 3, {})
    assert not ok and "FAILED" in table


def test_the_reliability_page_has_the_markers_and_gets_the_table(report: ModuleType, tmp_path: Path) -> None:
    page = tmp_path / "reliability.md"
    page.write_text(
        (ROOT / "docs" / "figures" / "reliability.md").read_text(encoding="utf-8"), encoding="utf-8"
    )
    report.write_page(page, "| the | table |")
    text = page.read_text(encoding="utf-8")
    assert f"{report.BEGIN}\n| the | table |\n{report.END}" in text
    assert text.count(report.BEGIN) == 1
