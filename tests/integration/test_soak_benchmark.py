"""benchmarks/soak.py at smoke size (20k messages): it runs, checks and writes the JSON the reliability
table reads, so it cannot rot between the long runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIELDS = {
    "messages": int,
    "live_keys": int,
    "seconds": float,
    "msgs_per_s": int,
    "rss_mb_10": float,
    "rss_mb_100": float,
    "rss_growth": float,
    "fds_10": int,
    "fds_100": int,
    "state_bytes_10": int,
    "state_bytes_100": int,
    "state_bytes_final": int,
    "changelog_bytes_100": int,
    "passed": bool,
}


def test_the_soak_benchmark_runs_and_writes_its_figures(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "soak.py"), "--messages", "20000", "--keys", "1000"]
    command += ["--json", str(out), "--workdir", str(tmp_path / "job"), "--no-progress"]
    run = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode in (0, 1), run.stderr  # 1: a check failed (it is printed, and in the JSON)
    result = json.loads(out.read_text())
    for field, kind in FIELDS.items():
        assert isinstance(result[field], kind), (field, result[field])
    assert result["messages"] == 20_000 and result["live_keys"] == 1000
    assert [s["percent"] for s in result["samples"]] == list(range(10, 101, 10))
    assert result["msgs_per_s"] > 0 and result["seconds"] > 0
    assert 10 < result["rss_mb_10"] < 4096 and result["fds_10"] > 3
    assert result["checks"]["counts_exact"], "the store holds exactly one count per message"
    assert result["store_total"] == 20_000 and result["store_keys"] == 1000
    assert result["checks"]["fds"], result
    assert result["passed"] == all(result["checks"].values())
    for line in ("PASS  open descriptors", "PASS  store counts sum 20,000"):
        assert line in run.stdout, run.stdout
