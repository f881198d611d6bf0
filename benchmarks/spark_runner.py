"""The Spark runner (issue 14, benchmark items b and c).

(b) ``SparkJobRunner`` with 2 containers against 1 container on the same 4-partition durable-log input of
    ``--messages`` messages, in one ``local[2,2]`` SparkSession made by this script; the pass-through task
    does ``--work`` iterations of arithmetic per message (0: nothing). The clock runs from ``start()``
    (coordinator up, Spark job submitted) until the coordinator's status counts every message; then the
    job is stopped. Prints each run's seconds and the median ratio 1-container time / 2-container time
    (startup included), and the ratio of steady throughputs (messages between 10% and 90% of the input
    over the time between, as the coordinator's status shows them), each run's 2-container run to the
    1-container run just before it.
(c) Time from launching ``samza-nb run --runner spark`` (a new process making its own SparkSession) to the
    first message processed (the task creates a file on its first message; this script polls for it every
    5 ms), and the same for the plain ``samza-nb run`` (one container in that process).

Each run of (b) is checked to have succeeded and processed every message once (the coordinator's count,
each partition's checkpointed offset; benchmarks/output_check.py: a mismatch raises, naming it).

Run: ``python benchmarks/spark_runner.py [--messages N] [--work K] [--runs R] [--only b|c]``. Needs pyspark
and Java.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.output_check import OutputMismatch, same  # noqa: E402 (after the path is set)

TASK = "spark_runner.Passthrough" if __name__ == "__main__" else f"{__name__}.Passthrough"
"""The task's class as the containers import it (this script's directory is on their path when it runs
as a script; the smoke tests import it as ``benchmarks.spark_runner``)."""


class Passthrough:
    """Does ``bench.work`` iterations per message; creates ``bench.first.file`` on its first message."""

    def init(self, context: Any) -> None:
        self.work = int(context.config.get_str("bench.work", "0") or 0)
        self.first = context.config.get_str("bench.first.file", "")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if self.first:
            Path(self.first).touch()
            self.first = ""
        x = 0
        for i in range(self.work):
            x += i
        self.sink = x


def fill(base: Path, messages: int) -> None:
    from samza_nb.systems.log import DurableLog

    log = DurableLog(base / "log")
    log.create_stream("words", 4)
    per = messages // 4
    for p in range(4):
        log.send_batch("words", ((None, f"w{p}-{i}".encode(), p) for i in range(per)))
    log.flush()
    log.close()


def job(base: Path, name: str, containers: int, work: int, **extra: str) -> dict[str, str]:
    return {
        "job.name": name,
        "task.class": TASK,
        "task.inputs": "log.words",
        "systems.log.samza.offset.default": "oldest",
        "job.container.count": str(containers),
        "job.logged.store.base.dir": str(base),
        "cluster-manager.container.status.interval.ms": "50",
        "bench.work": str(work),
        **extra,
    }


def check_run(runner: Any, name: str, total: int, per: int) -> None:
    """The run of job ``name`` succeeded and processed every message exactly once: no failure, the
    coordinator counted ``total`` messages, and every task checkpointed the last offset of each of its
    partitions. An OutputMismatch naming what differs otherwise (a crashed run looks fast)."""
    if runner.failure is not None:
        raise OutputMismatch(f"{name}: the run failed: {runner.failure}")
    same(f"{name}: messages processed", runner.processed, total)
    checkpoints = asyncio.run(runner.read_checkpoints())
    offsets = {ssp.partition: offset for task in checkpoints.values() for ssp, offset in task.items()}
    same(f"{name}: the checkpointed offset of each partition", offsets, {p: str(per - 1) for p in range(4)})


def scaling(messages: int, work: int, runs: int, spark: Any = None) -> None:
    """(b), in ``spark`` (a ``local[2,2]`` session) or in a session made here (stopped at the end)."""
    from samza_nb import Config
    from samza_nb.runtime.spark.runner import SparkJobRunner

    own = spark is None
    if own:
        from pyspark.sql import SparkSession

        os.environ["PYSPARK_PYTHON"] = sys.executable
        spark = (
            SparkSession.builder.master("local[2,2]")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .getOrCreate()
        )
        spark.sparkContext.setLogLevel("FATAL")
    times: dict[int, list[float]] = {1: [], 2: []}
    steady: dict[int, list[float]] = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "state"
        fill(base, messages)
        total = messages // 4 * 4
        for run in range(runs):
            for containers in (1, 2):
                name = f"scale-{run}-{containers}"
                config = Config(job(base, name, containers, work))
                runner = SparkJobRunner(config, spark)
                started = time.perf_counter()
                runner.start()
                marks: dict[float, float] = {}  # fraction of the input -> when the status first showed it
                while runner.processed < total and not runner.done:
                    done = runner.processed / total
                    for fraction in (0.1, 0.9):
                        if done >= fraction and fraction not in marks:
                            marks[fraction] = time.perf_counter()
                    time.sleep(0.01)
                end = time.perf_counter()
                times[containers].append(end - started)
                rate = 0.8 * total / (marks.get(0.9, end) - marks.get(0.1, started))
                steady[containers].append(rate)
                runner.stop()
                runner.join()
                check_run(runner, name, total, total // 4)
                print(
                    f"run {run}: {containers} container(s): {times[containers][-1]:.2f} s from start, "
                    f"{rate:,.0f} msg/s between 10% and 90% of the input",
                    flush=True,
                )
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"(b) {total} messages, work {work}: 1 container {one:.2f} s, 2 containers {two:.2f} s from start")
    print(f"(b) ratio 1 container / 2 containers, from start (startup included): {one / two:.2f}")
    ratios = [b / a for a, b in zip(steady[1], steady[2], strict=True)]
    print(
        "(b) throughput 2 containers / 1 container between 10% and 90%: "
        f"median {statistics.median(ratios):.2f} (runs: {', '.join(f'{r:.2f}' for r in ratios)})"
    )
    if own:
        spark.stop()


def first_message(runner: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        fill(base / "state", 400)
        first = base / "first"
        extra = {"bench.first.file": str(first), "spark.master": "local[1,2]"}
        values = job(base / "state", f"first-{runner}", 1, 0, **extra)
        (base / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
        command = [
            sys.executable,
            "-m",
            "samza_nb",
            "run",
            "--config-path",
            "job.properties",
            "--no-progress",
        ]
        if runner == "spark":
            command += ["--runner", "spark"]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE), str(ROOT)]))
        started = time.perf_counter()
        process = subprocess.Popen(
            command, cwd=base, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        try:
            while not first.exists():
                if process.poll() is not None:
                    raise SystemExit(f"samza-nb run ({runner}) exited with status {process.returncode}")
                time.sleep(0.005)
            return time.perf_counter() - started
        finally:
            process.terminate()
            process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--work", type=int, default=200)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=("b", "c"), help="measure one of the two")
    args = parser.parse_args()
    if args.only != "c":
        scaling(args.messages, args.work, args.runs)
    for runner in ("local", "spark") if args.only != "b" else ():
        seconds = [first_message(runner) for _ in range(args.runs)]
        print(
            f"(c) samza-nb run{' --runner spark' if runner == 'spark' else ''}: first message after "
            f"{statistics.median(seconds):.2f} s (runs: {', '.join(f'{s:.2f}' for s in seconds)})"
        )


if __name__ == "__main__":
    main()
