"""The crash-point harness: run a job in a child process, kill it at a named point, restart it to the end.

A case arms one point of :data:`samza_nb.crash_points.POINTS` in a child process's environment
(``SAMZA_NB_CRASH_POINT``), waits for the child to die by SIGKILL *at that point* (its standard error names
the point: a child that ends any other way fails the case), then runs the job again, unarmed, to completion
and checks what matters (nothing lost, exact counts where the state is transactional, duplicates only where
at-least-once allows them). :func:`record` adds the case's outcome to the reliability report when
``SAMZA_NB_RELIABILITY_DIR`` names a directory (``make reliability`` sets it); ``SAMZA_NB_CRASH_RUNS`` repeats
each case (``make reliability``: 3 runs in a row, each from a fresh directory; the suite: 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from samza_nb import crash_points

RUNS: Final = int(os.environ.get("SAMZA_NB_CRASH_RUNS", "1"))
"""How many times each case runs in a row (each from a fresh directory)."""

REPORT_ENV: Final = "SAMZA_NB_RELIABILITY_DIR"
TIMEOUT_S: Final = 180.0  # a safety net against hangs, never a measurement

SAMZA_NB: Final = (sys.executable, "-m", "samza_nb")
"""The CLI, as a command prefix (``[*SAMZA_NB, "run", "--config-path", ...]``)."""


@dataclass(frozen=True)
class Outcome:
    """What one run of a case found after the restart: the report's line for it."""

    point: str
    scenario: str
    messages: int  # inputs the job had to process
    lost: int  # outputs (or counted inputs) missing after the restart: must be 0
    duplicates: int  # outputs seen more than once (allowed only where at-least-once allows them)
    exact: bool  # state (counts) exactly as one run without a crash would leave it
    guarantee: str  # "exactly-once state" or "at-least-once output" ...: what the case asserts


def unarmed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child with no crash point armed (and ``extra`` on top)."""
    env = {k: v for k, v in os.environ.items() if k != crash_points.ENV}
    env.update(extra or {})
    return env


def run_killed_at(
    command: Sequence[str],
    cwd: Path,
    point: str,
    *,
    at: int = 1,
    whole: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT_S,
) -> str:
    """Run ``command`` with ``point`` armed (its ``at``-th arrival is fatal); assert it died by SIGKILL at
    that point (``whole`` False: one of its child processes did, and the command failed because of it).
    Returns its combined output (for the assertion messages of what follows)."""
    assert point in crash_points.POINTS, f"unknown crash point {point!r}"
    armed = unarmed_env(env) | {crash_points.ENV: f"{point}@{at}"}
    done = subprocess.run(command, cwd=cwd, env=armed, capture_output=True, timeout=timeout, check=False)
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    said = f"samza_nb crash point {point} reached"
    died = done.returncode == -9 if whole else done.returncode not in (0, -9)
    assert died and said in output, (
        f"{' '.join(command)} armed at {point}@{at} should die by SIGKILL there; it exited with "
        f"{done.returncode}:\n{output[-4000:]}"
    )
    return output


def run_to_completion(
    command: Sequence[str], cwd: Path, *, env: Mapping[str, str] | None = None, timeout: float = TIMEOUT_S
) -> str:
    """Run ``command`` unarmed; assert it exits 0. Returns its combined output."""
    done = subprocess.run(
        command, cwd=cwd, env=unarmed_env(env), capture_output=True, timeout=timeout, check=False
    )
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, f"{' '.join(command)} exited with {done.returncode}:\n{output[-4000:]}"
    return output


def record(outcome: Outcome) -> None:
    """Add ``outcome`` to the reliability report (a JSON line in
    ``$SAMZA_NB_RELIABILITY_DIR/crash_points.jsonl``); nothing when the variable is unset."""
    directory = os.environ.get(REPORT_ENV)
    if not directory:
        return
    path = Path(directory) / "crash_points.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as report:
        report.write(json.dumps(asdict(outcome)) + "\n")


__all__ = [
    "RUNS",
    "SAMZA_NB",
    "Outcome",
    "record",
    "run_killed_at",
    "run_to_completion",
    "unarmed_env",
]
