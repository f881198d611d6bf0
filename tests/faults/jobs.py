"""The jobs the crash-point cases run as child processes, and how to read back what they left.

A *counting job* reads a bounded file input (``file.words``: it ends by itself), counts each word in a DuckDB
store ``counts`` whose changelog is on the durable log, and sends each input's offset to the durable-log
stream ``out``. Its task asks for a commit every ``COMMIT_EVERY`` messages, so the commit points are reached
at known moments. After a crash and a restart: the store's counts must equal the input's (state and offsets
commit in one transaction), every input offset must be in ``out`` (at-least-once output), and the
duplicates in ``out`` are counted for the report.
"""

from __future__ import annotations

import collections
import random
import textwrap
from pathlib import Path

import duckdb

from samza_nb.systems.log import DurableLog
from tests.faults.harness import Outcome, record

COMMIT_EVERY = 400
WORDS = [f"w{i}" for i in range(60)]

TASK_MODULE = '''
from concurrent.futures import ThreadPoolExecutor

from samza_nb import OutgoingMessageEnvelope, RequestScope, SystemStream

OUT = SystemStream("log", "out")
COMMIT_EVERY = {commit_every}


class CountTask:
    """Counts words; sends each input's offset to log.out; asks for a commit every COMMIT_EVERY."""

    def init(self, context):
        self.counts = context.get_store("counts")
        self.seen = 0

    def process(self, envelope, collector, coordinator):
        word = envelope.message
        self.counts.put(word, (self.counts.get(word) or 0) + 1)
        sent = f"{{envelope.ssp.stream}}:{{envelope.offset}}"
        collector.send(OutgoingMessageEnvelope(OUT, sent, key=sent))
        self.seen += 1
        if self.seen % COMMIT_EVERY == 0:
            coordinator.commit(RequestScope.CURRENT_TASK)

    def window(self, collector, coordinator):
        pass

    def on_end_of_stream(self, collector, coordinator):
        pass


COMPLETERS = ThreadPoolExecutor(2)


class AsyncCountTask(CountTask):
    """The same count as a callback task: each message's callback completes on another thread, later."""

    def process_async(self, envelope, collector, coordinator, callback):
        self.process(envelope, collector, coordinator)
        COMPLETERS.submit(callback.complete)
'''

CONFIG = """
job.name = faults
task.class = count_task.{task}
task.inputs = {inputs}
systems.file.samza.factory = samza_nb.systems.file.FileSystemFactory
systems.file.samza.offset.default = oldest
systems.log.samza.msg.serde = string
systems.log.samza.key.serde = string
task.commit.ms = 600000
stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory
stores.counts.key.serde = string
stores.counts.msg.serde = int
stores.counts.changelog = counts-changelog
job.logged.store.base.dir = state
"""


def input_files(files: int) -> list[str]:
    """The input streams of a job with ``files`` input files: ``words`` alone, else ``words0``...."""
    return ["words"] if files == 1 else [f"words{n}" for n in range(files)]


def write_counting_job(
    directory: Path,
    lines: list[str],
    *,
    task: str = "CountTask",
    files: int = 1,
    extra: str = "",
) -> list[str]:
    """Write the job's files into ``directory`` (``lines`` dealt round-robin over ``files`` input files,
    each its own stream); returns the ``samza-nb`` arguments that run it (from ``directory``)."""
    (directory / "count_task.py").write_text(TASK_MODULE.format(commit_every=COMMIT_EVERY))
    streams = input_files(files)
    append_lines(directory, lines, files, mode="w")
    config = CONFIG.format(task=task, inputs=",".join(f"file.{s}" for s in streams))
    config += "".join(f"systems.file.streams.{s}.path = {s}.txt\n" for s in streams)
    (directory / "job.properties").write_text(config + textwrap.dedent(extra))
    return ["run", "--config-path", "job.properties", "--no-progress"]


def append_lines(directory: Path, lines: list[str], files: int = 1, *, mode: str = "a") -> None:
    """Deal ``lines`` round-robin over the job's ``files`` input files (appending, or writing anew)."""
    streams = input_files(files)
    for n, stream in enumerate(streams):
        with (directory / f"{stream}.txt").open(mode) as file:
            file.write("".join(f"{line}\n" for line in lines[n :: len(streams)]))


def words(count: int, seed: int) -> list[str]:
    """``count`` words drawn from WORDS with ``seed``."""
    rng = random.Random(seed)
    return [rng.choice(WORDS) for _ in range(count)]


def store_counts(directory: Path) -> dict[str, int]:
    """The committed counts of the ``counts`` store, summed over the job's tasks (their state files)."""
    totals: dict[str, int] = {}
    for path in sorted((directory / "state" / "faults-1" / "stores").glob("partition-*.duckdb")):
        conn = duckdb.connect(str(path), read_only=True)
        try:
            listed = conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
            tables = [row[0] for row in listed]
            for table in tables:
                if table.startswith("store__counts__"):
                    for key, value in conn.execute(f'SELECT k, v FROM "{table}"').fetchall():
                        word = bytes(key).decode()
                        count = int.from_bytes(bytes(value), "big", signed=True)
                        totals[word] = totals.get(word, 0) + count
        finally:
            conn.close()
    return totals


def output_offsets(directory: Path) -> collections.Counter[str]:
    """How many times each input (``<stream>:<offset>``) is in log.out."""
    with DurableLog(directory / "state" / "log") as log:
        if "out" not in log.streams():
            return collections.Counter()
        return collections.Counter(
            value.decode() for p in range(log.partitions("out")) for _, _, value in log.read("out", p)
        )


def counting_outcome(directory: Path, lines: list[str], point: str, scenario: str) -> Outcome:
    """What the restarted counting job left (exact counts? every input's output? how many twice?), recorded
    for the reliability report."""
    outputs = output_offsets(directory)
    outcome = Outcome(
        point=point,
        scenario=scenario,
        messages=len(lines),
        lost=max(len(lines) - len(outputs), 0),
        duplicates=sum(outputs.values()) - len(outputs),
        exact=store_counts(directory) == dict(collections.Counter(lines)),
        guarantee="exactly-once state, at-least-once output",
    )
    record(outcome)
    return outcome


__all__ = [
    "COMMIT_EVERY",
    "append_lines",
    "counting_outcome",
    "input_files",
    "output_offsets",
    "store_counts",
    "words",
    "write_counting_job",
]
