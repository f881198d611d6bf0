"""Throughput of 2 containers on 2 workers against 1 container on 1 worker, on the standalone cluster
harness (issue 40, item 5).

One cluster (tests/integration/spark/cluster.py: a master and 2 workers of 1 core each, started once) and a
Kafka-protocol broker (checkpoints, coordinator stream); this process is the driver (its SparkSession to the
cluster, the job coordinator). The input: ``--rows`` rows as 2 parquet files in the cluster's shared
directory, a configured Spark input read where it is (2 partitions, no Spark write). The job: a pass-through
task doing ``--work`` iterations of arithmetic per message (0: nothing), ``job.container.count`` 1 (one
executor busy, reading both partitions) then 2 (one partition each, one per worker), interleaved, ``--runs``
times. Busy time: from the coordinator's first report of a processed message to the report of the last
(the status every 100 ms); steady throughput: messages between 10% and 90% of the input over the time
between. Each run is checked to have processed every row once (the coordinator's count).

``--pin``: each worker's processes (its JVM, the executor it starts, the Python daemon, workers and
containers; affinity is inherited) on a core of their own (worker n on CPU n), the driver on every core:
an executor's CPU capped at one core, as on a machine with a core per worker. The machine's load (other
processes) is printed with each run: on a shared 2-core machine the ratio is what one run shows.

Run: ``python benchmarks/spark_cluster_scaling.py [--rows 1000000] [--runs 3] [--work 0] [--pin]``. Needs
pyspark, Java, the kafka extra and root (the harness' mount namespaces).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from spark_launch import Cluster, uptime  # noqa: E402 (after the path is set)

TASK = "spark_cluster_scaling.Passthrough"


class Passthrough:
    """Does ``bench.work`` iterations per message; at its close appends to ``bench.cpu.file`` the CPU
    seconds its process spent and the wall seconds that passed between its first message and its last
    (to 8,192 messages), and how many it processed."""

    def init(self, context: Any) -> None:
        self.work = int(context.config.get_str("bench.work", "0") or 0)
        self.cpu_file = context.config.get_str("bench.cpu.file", "")
        self.count = 0
        self.first = self.last = (0.0, 0.0)

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        x = 0
        for i in range(self.work):
            x += i
        self.sink = x
        self.count += 1
        if self.count & 8191 == 1:
            self.last = (time.process_time(), time.time())
            if self.count == 1:
                self.first = self.last

    def close(self) -> None:
        if self.cpu_file and self.count:
            with open(self.cpu_file, "a") as out:
                cpu, wall = self.last[0] - self.first[0], self.last[1] - self.first[1]
                out.write(f"{cpu} {wall} {self.count}\n")


def cpu_shares(path: Path) -> list[float]:
    """Each container's CPU seconds over its busy wall seconds (1.0: it had a core to itself)."""
    if not path.exists():
        return []
    shares = []
    for line in path.read_text().splitlines():
        cpu, wall, _ = (float(x) for x in line.split())
        shares.append(cpu / wall if wall > 0 else 0.0)
    return shares


def write_rows(directory: Path, rows: int) -> Path:
    """``rows`` rows (``id``, ``k``) as 2 parquet files of half each under ``directory``/rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = directory / "rows"
    out.mkdir(parents=True)
    half = rows // 2
    for n in range(2):
        ids = range(n * half, (n + 1) * half)
        pq.write_table(
            pa.table({"id": list(ids), "k": [f"k{i % 17}" for i in ids]}), out / f"part-{n}.parquet"
        )
    return out


def pin(cluster: Cluster) -> None:
    """Worker n's whole process tree on CPU n (see the module)."""
    for n, pid in enumerate(cluster.cluster.worker_pids):
        for process in [pid, *_descendants(pid)]:
            subprocess.run(
                ["taskset", "-a", "-p", "-c", str(n), str(process)], capture_output=True, check=False
            )


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        for child in children.read_text().split():
            found += [int(child), *_descendants(int(child))]
    return found


def one_run(
    spark: Any, cluster: Cluster, data: Path, containers: int, work: int, total: int
) -> tuple[float, float, list[float]]:
    """(busy seconds, steady messages a second, each container's CPU share) of one run with
    ``containers`` containers."""
    from samza_nb import Config
    from samza_nb.runtime.spark.runner import SparkJobRunner

    values = {
        **cluster.config(),
        "job.name": f"scale-{containers}-{uuid.uuid4().hex[:6]}",
        "task.class": TASK,
        "task.inputs": "spark.rows",
        "job.container.count": str(containers),
        "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
        "systems.spark.samza.offset.default": "oldest",
        "systems.spark.streams.rows.spark.path": str(data),
        "cluster-manager.container.status.interval.ms": "100",
        "job.logged.store.base.dir": str(cluster.cluster.shared / "state"),
        "bench.work": str(work),
        "bench.cpu.file": str(data.parent / f"cpu-{uuid.uuid4().hex[:6]}"),
    }
    runner = SparkJobRunner(Config(values), spark, python_path=[str(HERE)])
    runner.start()
    marks: dict[float, float] = {}
    while runner.processed < total and not runner.done:
        done = runner.processed / total
        for fraction in (1e-9, 0.1, 0.9):
            if done >= fraction and fraction not in marks:
                marks[fraction] = time.perf_counter()
        time.sleep(0.01)
    end = time.perf_counter()
    runner.stop()
    runner.join()
    if runner.failure is not None or runner.processed != total:
        raise SystemExit(
            f"run of {containers} container(s): {runner.failure or runner.processed} (of {total})"
        )
    busy = end - marks.get(1e-9, end)
    rate = 0.8 * total / (marks.get(0.9, end) - marks.get(0.1, end - busy))
    return busy, rate, cpu_shares(Path(values["bench.cpu.file"]))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=int, default=0)
    parser.add_argument("--pin", action="store_true")
    args = parser.parse_args()
    from pyspark.sql import SparkSession

    with Cluster() as cluster:
        if args.pin:
            pin(cluster)
        os.environ["PYSPARK_PYTHON"] = sys.executable
        config = cluster.config()
        builder = SparkSession.builder.master(config["spark.master"]).config("spark.ui.enabled", "false")
        for key, value in config.items():
            if key.startswith("spark.conf."):
                builder = builder.config(key.removeprefix("spark.conf."), value)
        spark = builder.getOrCreate()
        spark.sparkContext.setLogLevel("FATAL")
        data = write_rows(cluster.cluster.shared / uuid.uuid4().hex[:8], args.rows)
        total = args.rows // 2 * 2
        busy: dict[int, list[float]] = {1: [], 2: []}
        ratios: list[float] = []
        try:
            for run in range(args.runs):
                rates = {}
                for containers in (1, 2):
                    if args.pin:
                        pin(cluster)  # executors and Python workers started since
                    seconds, rates[containers], shares = one_run(
                        spark, cluster, data, containers, args.work, total
                    )
                    busy[containers].append(seconds)
                    print(
                        f"run {run}: {containers} container(s), {containers} worker(s): "
                        f"busy {seconds:.2f} s, {rates[containers]:,.0f} msg/s from 10% to 90%, CPU share "
                        f"{', '.join(f'{x:.2f}' for x in shares)} ({uptime()})",
                        flush=True,
                    )
                ratios.append(rates[2] / rates[1])
        finally:
            spark.stop()
    one, two = statistics.median(busy[1]), statistics.median(busy[2])
    print(
        f"{total} rows, work {args.work}{', pinned' if args.pin else ''}: busy 1 worker {one:.2f} s, "
        f"2 workers {two:.2f} s; ratio {one / two:.2f}"
    )
    print(
        f"throughput 2 workers / 1 worker between 10% and 90%: median {statistics.median(ratios):.2f} "
        f"(runs: {', '.join(f'{r:.2f}' for r in ratios)})"
    )


if __name__ == "__main__":
    main()
