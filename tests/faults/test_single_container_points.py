"""Crash points of one container: the commit sequence, the state file's transaction, the durable log's
appends, the task's window, end-of-stream and async callbacks, a task done while the others are not (a
counting job: see ``jobs.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import RUNS, SAMZA_NB, run_killed_at, run_to_completion
from tests.faults.jobs import counting_outcome, store_counts, words, write_counting_job

MESSAGES = 2000

FOUR_TASKS = "job.systemstreampartition.grouper.factory = group-by-ssp\n"

# point -> (arrival that is fatal, task class, extra config, input files: one task each)
CASES: dict[str, tuple[int, str, str, int]] = {
    "commit.stores-flushed": (2, "CountTask", "", 1),
    "commit.producers-flushed": (2, "CountTask", "", 1),
    "commit.state-written": (2, "CountTask", "", 1),
    "commit.checkpoint-written": (2, "CountTask", "", 1),
    "state.mid-transaction": (2, "CountTask", "", 1),
    "log.append.torn": (3, "CountTask", "", 1),
    "log.append.before-fsync": (3, "CountTask", "", 1),
    "log.append.after-fsync": (3, "CountTask", "", 1),
    "task.window-done": (3, "CountTask", "task.window.ms = 1\n", 1),
    "task.end-of-stream-done": (1, "CountTask", "", 1),
    "callbacks.completed": (900, "AsyncCountTask", "task.max.concurrency = 4\n", 1),
    "container.stopping": (1, "CountTask", FOUR_TASKS, 4),
}
COVERED = tuple(CASES)
SCENARIO = "word count, file input, store + changelog + output on the durable log"


@pytest.mark.parametrize("point", COVERED)
def test_a_crash_at_the_point_then_a_restart_loses_nothing(tmp_path: Path, point: str) -> None:
    at, task, extra, files = CASES[point]
    for run in range(RUNS):
        directory = tmp_path / f"run-{run}"
        directory.mkdir()
        lines = words(MESSAGES, seed=run)
        command = [*SAMZA_NB, *write_counting_job(directory, lines, task=task, extra=extra, files=files)]
        run_killed_at(command, directory, point, at=at)
        run_to_completion(command, directory)
        outcome = counting_outcome(directory, lines, point, SCENARIO)
        assert outcome.lost == 0, outcome
        assert outcome.exact, (outcome, store_counts(directory))
