"""The crash-point hook: unarmed it does nothing, armed it kills at the named point's n-th arrival."""

from __future__ import annotations

import subprocess
import sys

import pytest

from samza_nb import crash_points

PROGRAM = """
from samza_nb import crash_points
for i in range(5):
    print("before", i, flush=True)
    if crash_points.ARMED:
        crash_points.reached("commit.state-written")
print("finished", flush=True)
"""


def run(value: str | None) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin"}
    if value is not None:
        env[crash_points.ENV] = value
    return subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_unarmed_runs_through() -> None:
    done = run(None)
    assert done.returncode == 0 and "finished" in done.stdout


def test_other_point_armed_runs_through() -> None:
    done = run("restore.mid")
    assert done.returncode == 0 and "finished" in done.stdout


@pytest.mark.parametrize(("value", "arrivals"), [("commit.state-written", 1), ("commit.state-written@3", 3)])
def test_armed_point_kills_at_its_arrival(value: str, arrivals: int) -> None:
    done = run(value)
    assert done.returncode == -9
    assert done.stdout.split("\n")[:-1] == [f"before {i}" for i in range(arrivals)]
    assert f"samza_nb crash point commit.state-written reached ({arrivals})" in done.stderr


@pytest.mark.parametrize("value", ["commit.state-writen", "commit.state-written@0", "commit.state-written@x"])
def test_bad_value_fails_loudly_naming_it(value: str) -> None:
    done = run(value)
    assert done.returncode == 1
    assert "ConfigError" in done.stderr and repr(value) in done.stderr


def test_every_point_says_what_holds() -> None:
    assert all(description.strip() for description in crash_points.POINTS.values())
