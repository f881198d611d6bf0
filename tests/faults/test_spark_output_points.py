"""Crash points of a job whose output is a Spark system's parquet: after a crash anywhere in the commit
sequence and a restart, every input is in the committed output exactly once (the commit records of the
sink: files count only with the checkpoint that covers them), and ``reset.offset`` writes a new generation
that replaces the old instead of adding to it.

The job reads a bounded file input and sends ``<stream>:<offset>`` of each message to ``spark.out`` (no
Spark is needed to write it; the committed files are read back with pyarrow, as ``read_output`` selects
them). Its task asks for a commit every ``COMMIT_EVERY`` messages. What a plain reader of the stream's
directory sees is checked too: the files its ``_spark_metadata`` log lists (what ``spark.read.parquet``
lists; every parquet file there when it has no log) are the committed ones, and no other file of the
stream is left in it (orphans of the attempt that died are deleted at recovery).
"""

from __future__ import annotations

import collections
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from samza_nb.config import load_config
from samza_nb.systems.spark.outputs.commits import committed_files
from samza_nb.systems.spark.settings import job_key, output_root
from tests.faults.harness import RUNS, SAMZA_NB, Outcome, record, run_killed_at, run_to_completion
from tests.faults.jobs import words

MESSAGES = 1500
COMMIT_EVERY = 400

TASK_MODULE = f'''
from samza_nb import OutgoingMessageEnvelope, RequestScope, SystemStream

OUT = SystemStream("spark", "out")


class SinkTask:
    """Sends each input's position to spark.out; asks for a commit every {COMMIT_EVERY} messages."""

    def init(self, context):
        self.seen = 0

    def process(self, envelope, collector, coordinator):
        collector.send(OutgoingMessageEnvelope(OUT, {{"at": f"{{envelope.ssp.stream}}:{{envelope.offset}}"}}))
        self.seen += 1
        if self.seen % {COMMIT_EVERY} == 0:
            coordinator.commit(RequestScope.CURRENT_TASK)
'''

CONFIG = """
job.name = spark-out
task.class = sink_task.SinkTask
task.inputs = file.words
systems.file.samza.factory = samza_nb.systems.file.FileSystemFactory
systems.file.samza.offset.default = oldest
systems.file.streams.words.path = words.txt
systems.spark.samza.factory = samza_nb.systems.spark.SparkSystemFactory
task.commit.ms = 600000
job.logged.store.base.dir = state
"""

# point -> the arrival that is fatal (the 2nd commit's, the final commit's for end-of-stream)
CASES: dict[str, int] = {
    "commit.outputs-prepared": 2,
    "spark.output-logged": 2,
}
OTHER_POINTS: dict[str, int] = {
    "commit.producers-flushed": 2,
    "commit.state-written": 2,
    "commit.checkpoint-written": 2,
    "task.end-of-stream-done": 1,
}
COVERED = tuple(CASES)
SCENARIO = "file input, output to the Spark sink (parquet + commit records)"


def write_job(directory: Path, lines: list[str], extra: str = "") -> list[str]:
    """The job's files in ``directory``; the samza-nb arguments that run it from there."""
    (directory / "sink_task.py").write_text(TASK_MODULE)
    (directory / "words.txt").write_text("".join(f"{line}\n" for line in lines))
    (directory / "job.properties").write_text(CONFIG + textwrap.dedent(extra))
    return [*SAMZA_NB, "run", "--config-path", "job.properties", "--no-progress"]


def committed_outputs(directory: Path) -> collections.Counter[str]:
    """How many times each input position is in the committed output of ``spark.out``."""
    config = load_config(directory / "job.properties")
    root = output_root(
        config.with_overrides({"job.logged.store.base.dir": str(directory / "state")}), "spark"
    )
    counts: collections.Counter[str] = collections.Counter()
    for path in committed_files(root, job_key(config), "out"):
        counts.update(row["at"] for row in pq.read_table(path).to_pylist())
    return counts


def plain_outputs(directory: Path) -> collections.Counter[str]:
    """How many times each input position is in what a plain reader of the stream's current directory
    lists: its ``_spark_metadata`` log's files, else every parquet file in it (Spark's listing)."""
    config = load_config(directory / "job.properties")
    root = output_root(
        config.with_overrides({"job.logged.store.base.dir": str(directory / "state")}), "spark"
    )
    generations = sorted((root / "out").glob(f"{job_key(config)}/g*"))
    stream = generations[-1] if generations else root / "out"
    files = sorted(stream.glob("*.parquet"))
    if (stream / "_spark_metadata").is_dir():
        from samza_nb.systems.spark.outputs import committed_paths

        logged = [Path(p) for p in committed_paths(stream)]
        assert sorted(logged) == files, "a parquet file of the stream is not in its log (an orphan)"
    counts: collections.Counter[str] = collections.Counter()
    for path in files:
        counts.update(row["at"] for row in pq.read_table(path).to_pylist())
    return counts


def exactly_once(directory: Path, point: str) -> Outcome:
    """The outcome of a run: every input once in the committed output, and in a plain reader's."""
    seen = committed_outputs(directory)
    plain = plain_outputs(directory)
    assert plain == seen, (
        f"a plain reader sees {sum(plain.values())} rows, the committed output {sum(seen.values())}"
    )
    expected = {f"words:{n}" for n in range(MESSAGES)}
    outcome = Outcome(
        point,
        SCENARIO,
        MESSAGES,
        lost=len(expected - set(seen)),
        duplicates=sum(count - 1 for count in seen.values() if count > 1),
        exact=set(seen) == expected and all(count == 1 for count in seen.values()),
        guarantee="exactly-once output",
    )
    record(outcome)
    return outcome


@pytest.mark.parametrize("point", [*COVERED, *OTHER_POINTS])
def test_a_crash_in_the_commit_then_a_restart_commits_each_output_once(tmp_path: Path, point: str) -> None:
    at = {**CASES, **OTHER_POINTS}[point]
    for run in range(RUNS):
        directory = tmp_path / f"run-{run}"
        directory.mkdir()
        command = write_job(directory, words(MESSAGES, seed=run))
        run_killed_at(command, directory, point, at=at)
        run_to_completion(command, directory)
        outcome = exactly_once(directory, point)
        assert outcome.exact, outcome


def test_reset_offset_starts_a_new_generation_read_instead_of_the_old(tmp_path: Path) -> None:
    command = write_job(tmp_path, words(MESSAGES, seed=7))
    run_to_completion(command, tmp_path)
    assert exactly_once(tmp_path, "no crash").exact
    run_to_completion(command, tmp_path)  # a second run resumes: nothing new
    assert exactly_once(tmp_path, "no crash, second run").exact
    reset = "systems.file.streams.words.samza.reset.offset = true\n"
    (tmp_path / "job.properties").write_text(CONFIG + reset)
    run_to_completion(command, tmp_path)
    assert exactly_once(tmp_path, "reset.offset").exact
    # a reset run killed mid-way, then run again: its generation holds every input once
    run_killed_at(command, tmp_path, "commit.checkpoint-written", at=2)
    run_to_completion(command, tmp_path)
    assert exactly_once(tmp_path, "reset.offset, crash, restart").exact
