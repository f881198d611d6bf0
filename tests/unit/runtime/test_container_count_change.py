"""A stateful job with a changelog moved from one container to two (its default checkpoints move from the
DuckDB file to the durable log, in Samza's format) resumes with exact counts."""

from __future__ import annotations

import collections
from pathlib import Path

from tests.faults.harness import SAMZA_NB, run_to_completion
from tests.faults.jobs import append_lines, output_offsets, store_counts, words, write_counting_job

CONTAINERS = "job.systemstreampartition.grouper.factory = group-by-ssp\njob.container.count = 1\n"


def test_one_container_then_two_carries_the_checkpoints_with_their_changelog_partitions(
    tmp_path: Path,
) -> None:
    first, second = words(600, seed=1), words(600, seed=2)
    args = write_counting_job(tmp_path, first, files=4, extra=CONTAINERS)
    run_to_completion([*SAMZA_NB, *args], tmp_path)
    append_lines(tmp_path, second, 4)
    run_to_completion([*SAMZA_NB, *args, "--set", "job.container.count=2"], tmp_path)
    assert store_counts(tmp_path) == dict(collections.Counter(first + second))
    outputs = output_offsets(tmp_path)
    assert len(outputs) == 1200 and set(outputs.values()) == {1}, "resumed at the checkpoints: no replay"
