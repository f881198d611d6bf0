"""benchmarks/peers/table.py: the peers benchmark's table shows rates with their ratio to samza_nb, and a
workload a library cannot run as "—" with its reason in a numbered footnote (no number made up)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def table() -> ModuleType:
    spec = importlib.util.spec_from_file_location("peers_table", ROOT / "benchmarks" / "peers" / "table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["peers_table"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_measured_cells_show_rate_ratio_and_share(table: ModuleType) -> None:
    notes: list[str] = []
    assert table.format_cell(table.Measured(412_345.6), notes) == "412,346 msg/s"
    assert table.format_cell(table.Measured(1_000.0, ratio=0.5), notes) == "1,000 msg/s (x0.50)"
    assert (
        table.format_cell(table.Measured(18_000.0, 1.25, 0.9), notes) == "18,000 msg/s, 90% of ideal (x1.25)"
    )
    assert table.format_cell(table.Measured(5.0, ratio=0.00003), notes) == "5 msg/s (x<0.01)"
    assert table.format_cell(table.Measured(100.0, 0.5, spread=0.04), notes) == "100 msg/s ±4% (x0.50)"
    assert notes == []


def test_a_lead_is_claimed_only_beyond_the_spread_of_the_runs(table: ModuleType) -> None:
    cells = {
        "samza_nb": table.Measured(19_000.0),
        "streamz": table.Measured(19_500.0),
        "q": table.Missing("-"),
    }
    close = {"samza_nb": [18_800.0, 19_000.0, 19_600.0], "streamz": [19_400.0, 19_500.0, 19_900.0]}
    assert table.leader(cells, close) == "no lead: streamz and samza_nb overlap within their runs' spread"
    apart = {"samza_nb": [18_000.0, 19_000.0, 19_100.0], "streamz": [19_400.0, 19_500.0, 19_900.0]}
    assert table.leader(cells, apart) == "streamz leads (its slowest run beats every other library's fastest)"


def test_missing_cells_are_a_dash_with_one_footnote_per_reason(table: ModuleType) -> None:
    rows = [
        ("W1", {"samza_nb": table.Measured(10.0), "peer": table.Missing("no async")}),
        ("W2", {"samza_nb": table.Measured(20.0), "peer": table.Missing("no state")}),
        ("W3", {"samza_nb": table.Measured(30.0), "peer": table.Missing("no async")}),
    ]
    text = table.markdown_table(["samza_nb", "peer"], rows)
    assert text.splitlines() == [
        "| workload | samza_nb | peer |",
        "|---|---|---|",
        "| W1 | 10 msg/s | — (1) |",
        "| W2 | 20 msg/s | — (2) |",
        "| W3 | 30 msg/s | — (1) |",
        "",
        "- (1) no async",
        "- (2) no state",
    ]


def test_a_column_a_row_lacks_is_not_measured(table: ModuleType) -> None:
    text = table.markdown_table(["samza_nb", "peer"], [("W1", {"samza_nb": table.Measured(1.0)})])
    assert "| W1 | 1 msg/s | — (1) |" in text
    assert text.endswith("- (1) not measured in this run")
