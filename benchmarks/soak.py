"""Soak: a stateful job counts 5M messages per key from the durable log; its RSS, open descriptors and
DuckDB state file size at each 10% of the input must stay flat after warm-up (issue 17, item 4).

The job: ``samza-nb run`` of ``SoakCount`` (below), a DuckDB store ``counts`` (bytes key → long) with its
changelog ``counts-changelog`` on the durable log, ``task.commit.ms = 100``, one container, no broker. The
input stream ``log.soak-input`` is written **in advance** (``--messages`` records, each one of ``--keys``
live keys drawn uniformly at random with a fixed seed, routed to a partition by key), so the job reads as
fast as it can and the figures are not the feeder's; ``--max-messages`` stops the job at the end of the
input.

The job runs as a **child process sampled from outside** (``/proc/<pid>/status`` VmRSS, ``/proc/<pid>/fd``):
this process holds the input generator, the progress bar and the samples, and none of that is in the
figures. The task reports its count through a pipe every 1% of the input; at each 10% this process samples
the child and the state files (``partition-*.duckdb`` and their ``.wal``). The 10% sample is the
warm-up point: by then every live key was written (1 - e^-5 of them with the default sizes), so the store's
rows, the engine's in-memory mirror, DuckDB's buffer pool and the caches are at their working size.

Checks (printed PASS/FAIL; the exit status is 1 if any fails): RSS growth from 10% to 100% under
``--max-rss-growth`` (10%); no more open descriptors at 100% than at 10%; state (file + ``.wal``) at 100%
at most ``--max-state-growth`` (1.5) times that at 10% plus DuckDB's 16 MiB checkpoint threshold (the
``.wal`` fills up to it and is then checkpointed into the file, which reuses the blocks it freed: the file
stops growing once it holds the live keys' rows and their free blocks); and, after the job stopped, the
store holds exactly ``--messages`` counts over at most ``--keys`` keys. The changelog on the durable log
is reported but not bounded: the durable log has no compaction, so it grows with the messages, not with
the live keys.

Run: ``python benchmarks/soak.py [--messages N] [--keys K] [--partitions P] [--commit-ms MS]
[--json PATH] [--workdir DIR] [--no-progress]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

JOB = "soak"
INPUT = "soak-input"
CHANGELOG = "counts-changelog"
WAL_ALLOWANCE = 16 * 2**20
"""DuckDB's ``checkpoint_threshold`` (default 16 MiB, samza_nb leaves it): the ``.wal`` is checkpointed
into the file once it passes this, so between checkpoints it holds up to about this much, whatever the
number of keys: a sample of file + ``.wal`` may catch it anywhere from 0 to this."""


class _Progress:
    """What every task of the container shares: the processed count and the pipe to the benchmark."""

    count = 0
    every = 0
    pipe: TextIO | None = None


class SoakCount:
    """The soak job's task: a per-key count in the DuckDB store ``counts``; every ``soak.progress.every``
    messages (over all tasks of the process) writes the count to the pipe ``soak.progress.fd``."""

    def init(self, context: Any) -> None:
        """Open the store and, once per process, the progress pipe."""
        self.counts = context.get_store("counts")
        if _Progress.pipe is None:
            fd = int(context.config.get_str("soak.progress.fd", "-1") or -1)
            _Progress.every = int(context.config.get_str("soak.progress.every", "0") or 0)
            if fd >= 0 and _Progress.every > 0:
                _Progress.pipe = os.fdopen(fd, "w", buffering=1)

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        """Count the message's key."""
        counts, key = self.counts, envelope.message
        counts.put(key, (counts.get(key) or 0) + 1)
        _Progress.count += 1
        if _Progress.every and _Progress.count % _Progress.every == 0 and _Progress.pipe is not None:
            _Progress.pipe.write(f"{_Progress.count}\n")


def write_input(log_dir: Path, messages: int, keys: int, partitions: int, seed: int) -> None:
    """``messages`` records of uniformly random keys (value = the key, partition = key index % P)."""
    from samza_nb.systems.log import DurableLog

    rng = random.Random(seed)
    names = [b"key-%07d" % i for i in range(keys)]
    indices = range(keys)
    with DurableLog(log_dir) as log:
        log.create_stream(INPUT, partitions)
        log.create_stream(CHANGELOG, partitions)
        chunk = 200_000
        for start in range(0, messages, chunk):
            drawn = rng.choices(indices, k=min(chunk, messages - start))
            log.send_batch(INPUT, [(None, names[i], i % partitions) for i in drawn])
        log.flush()


def job_config(state: Path, commit_ms: int, progress_fd: int, every: int) -> dict[str, str]:
    """The soak job: durable log in, a DuckDB store with its changelog on the durable log."""
    return {
        "job.name": JOB,
        "task.class": "benchmarks.soak.SoakCount",
        "task.inputs": f"log.{INPUT}",
        "systems.log.samza.offset.default": "oldest",
        "task.commit.ms": str(commit_ms),
        "job.logged.store.base.dir": str(state),
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "bytes",
        "stores.counts.msg.serde": "long",
        "stores.counts.changelog": CHANGELOG,
        "soak.progress.fd": str(progress_fd),
        "soak.progress.every": str(every),
    }


def memory_mb(pid: int) -> dict[str, float]:
    """VmRSS of ``pid`` and its parts (RssAnon, RssFile, RssShmem), in MiB."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
            found[name] = round(int(rest.split()[0]) / 1024, 1)
    if "VmRSS" not in found:
        raise RuntimeError(f"no VmRSS for {pid}")
    return found


def open_fds(pid: int) -> int:
    """How many descriptors ``pid`` has open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def files_bytes(paths: list[Path]) -> int:
    """Total size of the files that exist among ``paths``."""
    return sum(p.stat().st_size for p in paths if p.exists())


def state_bytes(stores: Path) -> int:
    """Size of the state files (``partition-*.duckdb`` and their ``.wal``)."""
    return files_bytes(list(stores.glob("partition-*.duckdb")) + list(stores.glob("partition-*.duckdb.wal")))


def changelog_bytes(log_dir: Path) -> int:
    """Size of the changelog stream's partition files on the durable log."""
    return files_bytes(list((log_dir / CHANGELOG).glob("*.log")))


def store_totals(stores: Path) -> tuple[int, int]:
    """(sum of the counts, number of keys) of the committed store ``counts`` across the state files."""
    import duckdb

    total = keys = 0
    for path in sorted(stores.glob("partition-*.duckdb")):
        conn = duckdb.connect(str(path), read_only=True)
        try:
            tables = [
                r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()
            ]
            for table in (t for t in tables if t.startswith("store__counts__")):
                for (value,) in conn.execute(f'SELECT v FROM "{table}"').fetchall():
                    total += int.from_bytes(bytes(value), "big", signed=True)
                    keys += 1
        finally:
            conn.close()
    return total, keys


def run_job(workdir: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Run the job as a child process to the end of the input, sampling it at each 10%; the figures."""
    state, log_dir = workdir / "state", workdir / "state" / "log"
    stores = state / f"{JOB}-1" / "stores"
    every = max(1, args.messages // 100)
    read_end, write_end = os.pipe()
    config = job_config(state, args.commit_ms, write_end, every)
    (workdir / "job.properties").write_text("".join(f"{k} = {v}\n" for k, v in config.items()))
    command = [sys.executable, "-m", "samza_nb", "run", "--config-path", "job.properties", "--no-progress"]
    command += ["--max-messages", str(args.messages)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=args.messages, unit="msg", unit_scale=True, desc="soak", file=sys.stderr)
    samples: list[dict[str, Any]] = []
    log_path = workdir / "job.log"
    start = time.perf_counter()
    with log_path.open("wb") as job_log:
        child = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=job_log, stderr=job_log, pass_fds=[write_end]
        )
    os.close(write_end)
    try:
        with os.fdopen(read_end) as pipe:
            done = 0
            for line in pipe:
                count = int(line)
                if bar is not None:
                    bar.update(count - done)
                done = count
                if count % (every * 10) == 0:
                    memory = memory_mb(child.pid)
                    samples.append(
                        {
                            "percent": count // every,
                            "messages": count,
                            "seconds": round(time.perf_counter() - start, 3),
                            "rss_mb": memory["VmRSS"],
                            "rss_anon_mb": memory.get("RssAnon", 0.0),
                            "rss_file_mb": memory.get("RssFile", 0.0),
                            "fds": open_fds(child.pid),
                            "state_bytes": state_bytes(stores),
                            "wal_bytes": files_bytes(list(stores.glob("partition-*.duckdb.wal"))),
                            "changelog_bytes": changelog_bytes(log_dir),
                        }
                    )
        code = child.wait(timeout=600)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if bar is not None:
            bar.close()
    elapsed = time.perf_counter() - start
    if code != 0:
        raise SystemExit(f"the soak job failed ({code}):\n{log_path.read_text()[-4000:]}")
    by_percent = {s["percent"]: s for s in samples}
    if 10 not in by_percent or 100 not in by_percent:
        raise SystemExit(f"the job did not report 10% and 100% (samples {sorted(by_percent)})")
    total, keys = store_totals(stores)
    return {
        "samples": samples,
        "exit_seconds": round(elapsed, 3),
        "state_bytes_final": state_bytes(stores),
        "store_total": total,
        "store_keys": keys,
    }


def figures(args: argparse.Namespace, run: dict[str, Any]) -> dict[str, Any]:
    """The JSON result: the 10% and 100% figures, throughput, the checks and every sample."""
    by_percent = {s["percent"]: s for s in run["samples"]}
    at10, at100 = by_percent[10], by_percent[100]
    rss_growth = at100["rss_mb"] / at10["rss_mb"] - 1
    state_ratio = at100["state_bytes"] / max(1, at10["state_bytes"])
    state_bound = args.max_state_growth * at10["state_bytes"] + WAL_ALLOWANCE
    steady = (at100["messages"] - at10["messages"]) / max(1e-9, at100["seconds"] - at10["seconds"])
    checks = {
        "rss_growth": rss_growth < args.max_rss_growth,
        # A leak raises every later sample; a descriptor open for a moment (a commit's or the driver
        # claim's write) raises one: the later of the last two samples' lows against the first two's highs.
        "fds": min(by_percent[90]["fds"], at100["fds"]) <= max(at10["fds"], by_percent[20]["fds"]),
        "state_bytes": at100["state_bytes"] <= state_bound,
        "counts_exact": run["store_total"] == args.messages and run["store_keys"] <= args.keys,
    }
    return {
        "messages": args.messages,
        "live_keys": args.keys,
        "partitions": args.partitions,
        "commit_ms": args.commit_ms,
        "seconds": at100["seconds"],
        "msgs_per_s": round(args.messages / at100["seconds"]),
        "msgs_per_s_after_warmup": round(steady),
        "rss_mb_10": at10["rss_mb"],
        "rss_mb_100": at100["rss_mb"],
        "rss_growth": round(rss_growth, 4),
        "max_rss_growth": args.max_rss_growth,
        "fds_10": at10["fds"],
        "fds_100": at100["fds"],
        "state_bytes_10": at10["state_bytes"],
        "state_bytes_100": at100["state_bytes"],
        "state_growth": round(state_ratio, 4),
        "max_state_growth": args.max_state_growth,
        "state_bytes_bound": round(state_bound),
        "wal_bytes_10": at10["wal_bytes"],
        "wal_bytes_100": at100["wal_bytes"],
        "state_bytes_final": run["state_bytes_final"],
        "changelog_bytes_100": at100["changelog_bytes"],
        "store_total": run["store_total"],
        "store_keys": run["store_keys"],
        "checks": checks,
        "passed": all(checks.values()),
        "samples": run["samples"],
    }


def report(result: dict[str, Any]) -> None:
    """Print the samples, the throughput and the checks."""
    print(
        f"soak: {result['messages']:,} messages over {result['live_keys']:,} live keys, "
        f"{result['partitions']} partition(s), task.commit.ms = {result['commit_ms']}"
    )
    print(
        f"{'at':>5} {'seconds':>8} {'RSS MiB':>8} {'anon':>7} {'file':>6} {'fds':>4} {'state MiB':>10} "
        f"{'changelog MiB':>14}"
    )
    for s in result["samples"]:
        print(
            f"{s['percent']:>4}% {s['seconds']:>8.1f} {s['rss_mb']:>8.1f} {s['rss_anon_mb']:>7.1f} "
            f"{s['rss_file_mb']:>6.1f} {s['fds']:>4} "
            f"{s['state_bytes'] / 2**20:>10.1f} {s['changelog_bytes'] / 2**20:>14.1f}"
        )
    print(
        f"throughput {result['msgs_per_s']:,} msgs/s over the run, "
        f"{result['msgs_per_s_after_warmup']:,} msgs/s from 10% to 100%; "
        f"state after the job stopped {result['state_bytes_final'] / 2**20:.1f} MiB"
    )
    checks = result["checks"]
    lines = {
        "rss_growth": f"RSS growth 10%→100% {result['rss_growth']:+.1%} < {result['max_rss_growth']:.0%}",
        "fds": f"open descriptors {result['fds_10']} → {result['fds_100']} (no growth)",
        "state_bytes": (
            f"state file + .wal {result['state_bytes_10'] / 2**20:.1f} → "
            f"{result['state_bytes_100'] / 2**20:.1f} MiB <= {result['max_state_growth']} x 10% + "
            f"{WAL_ALLOWANCE / 2**20:.0f} MiB of .wal = {result['state_bytes_bound'] / 2**20:.1f} MiB"
        ),
        "counts_exact": (
            f"store counts sum {result['store_total']:,} = {result['messages']:,} over "
            f"{result['store_keys']:,} <= {result['live_keys']:,} keys"
        ),
    }
    for name, text in lines.items():
        print(f"{'PASS' if checks[name] else 'FAIL'}  {text}")
    print("PASSED" if result["passed"] else "FAILED")


def main(argv: list[str] | None = None) -> int:
    """Parse the flags, write the input, run the job, print (and write) the figures; 1 if a check failed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5_000_000)
    parser.add_argument("--keys", type=int, default=100_000, help="live keys (default 100,000)")
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--commit-ms", type=int, default=100)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--max-rss-growth", type=float, default=0.10, help="RSS growth 10%%→100%% (0.10)")
    parser.add_argument("--max-state-growth", type=float, default=1.5, help="state 100%% / 10%% (1.5)")
    parser.add_argument("--json", type=Path, help="also write the result as JSON here")
    parser.add_argument("--workdir", type=Path, help="keep the job's files here (default: a temp dir)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.messages < 100 or args.keys < 1 or args.partitions < 1:
        parser.error("--messages must be at least 100, --keys and --partitions at least 1")
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        workdir = args.workdir or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        write_input(workdir / "state" / "log", args.messages, args.keys, args.partitions, args.seed)
        print(f"input: {args.messages:,} messages written in {time.perf_counter() - started:.1f} s")
        result = figures(args, run_job(workdir, args))
    report(result)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
