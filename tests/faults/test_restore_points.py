"""Crash points while a container restores its store from the changelog: a first run counts, its local
state is deleted, more input arrives; the second run dies restoring; the third restores and finishes."""

from __future__ import annotations

import collections
import shutil
from pathlib import Path

import pytest

from tests.faults.harness import RUNS, SAMZA_NB, run_killed_at, run_to_completion
from tests.faults.jobs import append_lines, counting_outcome, store_counts, words, write_counting_job

COVERED = ("restore.mid", "restore.done")


@pytest.mark.parametrize("point", COVERED)
def test_a_crash_while_restoring_then_a_restart_restores_exactly(tmp_path: Path, point: str) -> None:
    for run in range(RUNS):
        directory = tmp_path / f"run-{run}"
        directory.mkdir()
        first, second = words(1200, seed=run), words(800, seed=100 + run)
        command = [*SAMZA_NB, *write_counting_job(directory, first)]
        run_to_completion(command, directory)
        assert store_counts(directory) == dict(collections.Counter(first))
        shutil.rmtree(directory / "state" / "faults-1" / "stores")
        append_lines(directory, second)
        run_killed_at(command, directory, point)
        run_to_completion(command, directory)
        scenario = "word count restoring its store from the durable-log changelog, then more input"
        outcome = counting_outcome(directory, first + second, point, scenario)
        assert outcome.lost == 0 and outcome.exact, outcome
