"""Launch of ``samza-nb run --runner spark``: where the time to the first message goes (issue 40, item 4).

Each run launches ``samza-nb run --runner spark`` in a new process (its own SparkSession) on a job whose
input is a Spark stream Spark writes once (``--input spark``: 2,000 rows of parquet, ``spark.key``,
``spark.partitions`` 2) or the embedded durable log (``--input log``), one container, and takes the time
from just before the launch until the task's first message. Interleaved with it, the plain ``samza-nb run``
of the same job (one container in that process). Medians of ``--runs``.

The driver runs through this script (``--trace``): it wraps the runner's steps in their modules and writes
a timestamp at each one's start and end to a marks file; the container's task writes when its process,
its parent (Spark's Python worker) and the worker's parent (Spark's Python daemon) started (from
``/proc``), when the task was initialised (the container's imports and start) and its first message. The
breakdown is the median of each step over the runs:

    interpreter + CLI imports  launch -> samza_nb's CLI imported
    config checks              -> the runner asks for a session
    SparkSession               the JVM and the SparkContext
    code shipped, task slots   the job's code shipped; until Spark has the slots (executors registered)
    coordinator                its start, which includes
      input written            writing the Spark input (a Spark job) or checking it is written
    containers' job submitted  -> the runner submits the containers' Spark job
    Python worker              -> the container's process started (Spark's daemon and worker, the task;
                                  the worker forked before the submission, < 0, is a reused one)
    container start            -> the task's init (the container's imports, its checkpoints, the inputs)
    first message              -> the task's first message

``--master cluster`` runs against a standalone master and 2 workers of 1 core each on this machine (the
test harness tests/integration/spark/cluster.py; a Kafka-protocol broker for checkpoints and the
coordinator stream; ``job.shared.dir`` in the cluster's shared directory), started once for all runs.

Run: ``python benchmarks/spark_launch.py [--runs 3] [--input spark|log] [--master local[2]|cluster]``.
Needs pyspark and Java (and, for the cluster, root for ``unshare`` and the kafka extra). The issue's target:
<= 8 s on ``local[2]``, <= 15 s on the cluster.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MARKS_ENV = "SAMZA_NB_LAUNCH_MARKS"
"""The file every process of a traced run appends its marks to (``<name> <epoch seconds>`` lines)."""
ROWS = 2000
STEPS = [
    ("interpreter + CLI imports", "launch", "cli.imported"),
    ("config checks", "cli.imported", "session.start"),
    ("SparkSession", "session.start", "session.ready"),
    ("code shipped, executors / task slots", "session.ready", "slots.ready"),
    ("coordinator", "coordinator.start", "coordinator.ready"),
    ("  of which input written", "input.start", "input.ready"),
    ("containers' job submitted", "coordinator.ready", "job.submit"),
    ("Python worker (daemon, worker, task)", "job.submit", "container.process"),
    ("  of which the worker was forked", "job.submit", "python.worker"),
    ("container start (imports, checkpoints)", "container.process", "task.init"),
    ("first message", "task.init", "first.message"),
]


# -- what runs in the traced processes ------------------------------------------------------------------
def mark(name: str, when: float | None = None, path: str | None = None) -> None:
    """Append ``name`` at ``when`` (default: now) to the marks file of this run (``path``, default
    ``$SAMZA_NB_LAUNCH_MARKS``), if any."""
    path = path or os.environ.get(MARKS_ENV)
    if path:
        with open(path, "a") as out:
            out.write(f"{name} {time.time() if when is None else when!r}\n")


def started_at(pid: int | str = "self") -> float:
    """When process ``pid`` started (epoch seconds, to 10 ms: /proc's clock ticks)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[-1].split()
    with open("/proc/uptime") as uptime:
        up = float(uptime.read().split()[0])
    return time.time() - up + int(fields[19]) / os.sysconf("SC_CLK_TCK")


class FirstMark:
    """A task that marks when its process and its parents started, its init and its first message."""

    def init(self, context: Any) -> None:
        self.marks = context.config.get_str("bench.marks", "")  # an executor has not the driver's env
        mark("container.process", started_at(), self.marks)
        with contextlib.suppress(OSError):
            mark("python.worker", started_at(os.getppid()), self.marks)
        mark("task.init", path=self.marks)
        self.first = True

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if self.first:
            self.first = False
            mark("first.message", path=self.marks)


def _timed(module: Any, name: str, start: str | None, end: str) -> None:
    """Wrap ``module.name`` so a call marks ``start`` before and ``end`` after it."""
    original: Callable[..., Any] = getattr(module, name)
    if inspect.iscoroutinefunction(original):

        async def waited(*args: Any, **kwargs: Any) -> Any:
            if start:
                mark(start)
            try:
                return await original(*args, **kwargs)
            finally:
                mark(end)

        setattr(module, name, waited)
        return

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if start:
            mark(start)
        try:
            return original(*args, **kwargs)
        finally:
            mark(end)

    setattr(module, name, wrapper)


def traced_driver(argv: list[str]) -> int:
    """``samza-nb`` with the runner's steps marked (see the module)."""
    from samza_nb.runtime import cli

    mark("cli.imported")
    from samza_nb.coordinator.job_coordinator import JobCoordinator
    from samza_nb.runtime.spark import runner
    from samza_nb.systems.spark import factory

    _timed(runner, "spark_session", "session.start", "session.ready")
    _timed(runner, "wait_for_slots_telling", None, "slots.ready")
    _timed(runner, "container_task", "job.submit", "job.task")
    _timed(JobCoordinator, "start", "coordinator.start", "coordinator.ready")
    _timed(factory, "prepare_input", "input.start", "input.ready")
    status: int = cli.main(argv)
    return status


# -- the benchmark --------------------------------------------------------------------------------------
def write_input(directory: Path, kind: str, state: Path) -> dict[str, str]:
    """The input of ``ROWS`` rows in ``directory`` (the durable log's: in the job's ``state`` directory);
    the config keys that read it."""
    if kind == "log":
        from samza_nb.systems.log import DurableLog

        log = DurableLog(state / "log")
        log.create_stream("words", 2)
        for p in range(2):
            log.send_batch("words", ((None, f"w{p}-{i}".encode(), p) for i in range(ROWS // 2)))
        log.flush()
        log.close()
        return {"task.inputs": "log.words", "systems.log.samza.offset.default": "oldest"}
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = directory / "rows.parquet"
    pq.write_table(pa.table({"id": list(range(ROWS)), "k": [f"k{i % 17}" for i in range(ROWS)]}), path)
    return {
        "task.inputs": "spark.rows",
        "systems.spark.samza.factory": "samza_nb.systems.spark.SparkSystemFactory",
        "systems.spark.samza.offset.default": "oldest",
        "systems.spark.streams.rows.spark.path": str(path),
        "systems.spark.streams.rows.spark.key": "k",
        "systems.spark.streams.rows.spark.partitions": "2",
    }


class Cluster:
    """The test harness' standalone cluster (2 workers of 1 core) and a broker, for ``--master cluster``."""

    def __init__(self) -> None:
        sys.path.insert(0, str(ROOT))
        from samza_nb.runtime.dev_broker import DevBroker
        from tests.integration.spark.cluster import SparkCluster

        self.cluster = SparkCluster(sys.executable, [], workers=2, cores=1)
        self.broker = DevBroker()

    def __enter__(self) -> Cluster:
        self.broker.start()
        self.cluster.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cluster.stop()
        self.broker.stop()

    def config(self) -> dict[str, str]:
        """What a job on this cluster needs (Kafka for checkpoints and the coordinator stream)."""
        kafka = "samza_nb.systems.kafka.KafkaSystemFactory"
        return {
            "spark.master": self.cluster.master_url,
            "spark.conf.spark.driver.host": "127.0.0.1",
            "spark.conf.spark.driver.bindAddress": "127.0.0.1",
            "spark.conf.spark.executor.memory": "512m",
            "job.shared.dir": str(self.cluster.shared / uuid.uuid4().hex[:8]),
            "systems.kafka.samza.factory": kafka,
            "systems.kafka.bootstrap.servers": self.broker.bootstrap_servers,
            "task.checkpoint.factory": "samza_nb.checkpoint.kafka.KafkaCheckpointManagerFactory",
            "task.checkpoint.system": "kafka",
            "job.default.system": "kafka",
        }


def launch(
    runner: str, kind: str, master: str, cluster: Cluster | None, code: str | None = None
) -> dict[str, float]:
    """One launch of ``samza-nb run`` (``runner`` "spark" or "local"; ``code``: a directory whose samza_nb
    it runs instead of this checkout's): each mark's seconds from the launch."""
    with tempfile.TemporaryDirectory(prefix="samza-launch-") as tmp:
        base = Path(tmp) if cluster is None else cluster.cluster.shared / uuid.uuid4().hex[:8]
        base.mkdir(exist_ok=True)
        values = {
            "job.name": f"launch-{runner}-{uuid.uuid4().hex[:6]}",
            "task.class": "spark_launch.FirstMark",
            "job.container.count": "1",
            "job.logged.store.base.dir": str(Path(tmp) / "state"),
            "cluster-manager.container.status.interval.ms": "100",
            **write_input(base, kind, Path(tmp) / "state"),
        }
        if runner == "spark":
            values["spark.master"] = master
            values.update(cluster.config() if cluster is not None else {})
        marks = base / "marks"  # the cluster's shared directory for a cluster's container
        values["bench.marks"] = str(marks)
        (base / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in values.items()))
        args = ["run", "--config-path", "job.properties", "--no-progress"]
        args += ["--runner", "spark"] if runner == "spark" else []
        path = os.pathsep.join(
            [*([code] if code else []), str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")]
        )
        env = dict(os.environ, PYTHONPATH=path, **{MARKS_ENV: str(marks)})
        env.pop("PYSPARK_PYTHON", None)  # a local master's workers: the runner picks this Python itself
        if cluster is not None:
            env["PYSPARK_PYTHON"] = sys.executable  # a cluster's executors: the driver says which
        started = time.time()
        process = subprocess.Popen(
            [sys.executable, str(HERE / "spark_launch.py"), "--trace", *args],
            cwd=base,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            while "first.message" not in read_marks(marks):
                if process.poll() is not None:
                    err = process.stderr.read().decode(errors="replace") if process.stderr else ""
                    raise SystemExit(f"samza-nb run ({runner}) exited with {process.returncode}:\n{err}")
                time.sleep(0.005)
        finally:
            process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=60)
            if process.poll() is None:
                process.kill()
                process.wait()
            if process.stderr is not None:
                process.stderr.close()
        return {name: when - started for name, when in read_marks(marks).items()} | {"launch": 0.0}


def read_marks(path: Path) -> dict[str, float]:
    """Each mark's first time in the marks file (an empty dict before it exists)."""
    found: dict[str, float] = {}
    with contextlib.suppress(FileNotFoundError):
        for line in path.read_text().splitlines():
            name, _, when = line.partition(" ")
            with contextlib.suppress(ValueError):
                found.setdefault(name, float(when))
    return found


def breakdown(runs: list[dict[str, float]]) -> Iterator[str]:
    """The median of each step over ``runs`` (a step whose marks a run lacks is left out)."""
    for label, start, end in STEPS:
        spans = [run[end] - run[start] for run in runs if start in run and end in run]
        if spans:
            yield f"  {label:42} {statistics.median(spans):6.2f} s"


def uptime() -> str:
    with open("/proc/loadavg") as load:
        return "load " + " ".join(load.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--input", choices=("spark", "log"), default="spark")
    parser.add_argument("--master", default="local[2]", help="a local master, or 'cluster'")
    parser.add_argument(
        "--before",
        help="a directory holding another samza_nb (e.g. main's, exported with git archive) launched too, "
        "interleaved: a before/after in one run",
    )
    args = parser.parse_args()
    print(f"{args.input} input, master {args.master}; {uptime()}", flush=True)
    with Cluster() if args.master == "cluster" else contextlib.nullcontext() as cluster:
        master = cluster.cluster.master_url if cluster is not None else args.master
        spark: list[dict[str, float]] = []
        before: list[dict[str, float]] = []
        plain: list[float] = []
        for run in range(args.runs):
            plain.append(launch("local", args.input, master, None)["first.message"])
            spark.append(launch("spark", args.input, master, cluster))
            if args.before:
                before.append(launch("spark", args.input, master, cluster, args.before))
            was = f", before {before[-1]['first.message']:.2f} s" if before else ""
            print(
                f"run {run}: --runner spark {spark[-1]['first.message']:.2f} s{was}, plain {plain[-1]:.2f} s "
                f"({uptime()})",
                flush=True,
            )
    first = [run["first.message"] for run in spark]
    print(
        f"samza-nb run --runner spark, launch to first message: median {statistics.median(first):.2f} s "
        f"(runs: {', '.join(f'{s:.2f}' for s in first)})"
    )
    print(f"samza-nb run (plain runner), the same: median {statistics.median(plain):.2f} s")
    if before:
        was = [run["first.message"] for run in before]
        print(
            f"--before's samza_nb, the same: median {statistics.median(was):.2f} s "
            f"(runs: {', '.join(f'{s:.2f}' for s in was)}); ratio after / before "
            f"{statistics.median(a / b for a, b in zip(first, was, strict=True)):.2f}"
        )
    print("where it goes (medians):")
    for line in breakdown(spark):
        print(line)
    if before:
        print("before:")
        for line in breakdown(before):
            print(line)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--trace"]:
        sys.exit(traced_driver(sys.argv[2:]))
    main()
