"""benchmarks/dashboard.py at a tiny size (its own process: it sets the kernel's PYTHONPATH): every variant
runs in a real kernel and is checked there to have processed every message."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_dashboard_benchmark_runs_and_checks_its_runs() -> None:
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "dashboard.py"),
        "--messages",
        "200",
        "--rounds",
        "1",
    ]
    run = subprocess.run(command, capture_output=True, text=True, timeout=110, cwd=ROOT)
    assert run.returncode == 0, run.stderr[-3000:]
    for variant in ("bare container", "monitor_only", "dashboard", "dashboard_wait_thread"):
        assert variant in run.stdout, run.stdout
