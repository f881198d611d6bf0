"""Crash points of a job of several container processes: the coordinator writing its stream (config,
set-changelog, the task-to-container assignment: a rebalance when the container count changed), a container
with its model and no task started. A counting job over four input files, one task each, on containers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import RUNS, SAMZA_NB, run_killed_at, run_to_completion
from tests.faults.jobs import append_lines, counting_outcome, words, write_counting_job

FILES = 4
CONTAINERS = """
job.systemstreampartition.grouper.factory = group-by-ssp
job.container.count = {count}
cluster-manager.container.status.interval.ms = 50
"""

# point -> (the process that dies: the run command itself, or one of its container processes)
CASES = {
    "coordinator.config-written": True,
    "coordinator.set-changelog-written": True,
    "coordinator.assignment-written": True,
    "container.model-fetched": False,
}
COVERED = tuple(CASES)


@pytest.mark.parametrize("point", COVERED)
def test_a_rebalance_from_one_container_to_two_crashed_at_the_point_loses_nothing(
    tmp_path: Path, point: str
) -> None:
    # A first run on one container counts half the input; the second, on two containers (tasks move:
    # a rebalance), dies at the point; the third finishes. Counts exact, every input's output there.
    for run in range(RUNS):
        directory = tmp_path / f"run-{run}"
        directory.mkdir()
        first, second = words(1200, seed=run), words(1200, seed=50 + run)
        args = write_counting_job(directory, first, files=FILES, extra=CONTAINERS.format(count=1))
        run_to_completion([*SAMZA_NB, *args], directory)
        append_lines(directory, second, FILES)
        two = [*SAMZA_NB, *args, "--set", "job.container.count=2"]
        run_killed_at(two, directory, point, whole=CASES[point])
        run_to_completion(two, directory)
        scenario = "word count over 4 files, 1 container then 2 (a rebalance)"
        outcome = counting_outcome(directory, first + second, point, scenario)
        assert outcome.lost == 0 and outcome.exact, outcome
