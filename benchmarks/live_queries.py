"""Queries into a running job of two container processes: a point lookup's latency, and what being queried
costs the job's throughput, as ratios measured in the same run.

The job (``job.container.count`` = 2, the processes runner, a job coordinator in this process) reads JSON
messages ``{"user": "u<k>", "n": i}`` from a 4-partition durable-log stream, keyed by user, and counts them
per user in a DuckDB store; it processes at full speed (CPU-bound) while the benchmark alternates windows
of ``--window`` seconds: unqueried, then queried ``--rate`` times a second with ``GET
/stores/counts/keys/<user>`` on the coordinator (four clients, each a kept-alive connection, the token;
each lookup routed to the container owning the user's partition, which reads the live value on its
loop), and so on. Throughput is the messages the containers reported per window; the ratio is the median
of the queried windows to the median of the unqueried ones. Lookup latency is measured end to end
(client → coordinator → container → its loop → back), p50 and p99 over every lookup; the same lookups
again once the job has processed its input (idle) show what the busy job's contention adds.

Checked: every lookup found its user, with a value at most the messages sent of that user and not below
the previous answer of the same user to the same client (live counts only grow); after the stop, every
user's committed count (``%%samza_sql``'s path) equals the messages sent.

Run: ``python benchmarks/live_queries.py [--messages N] [--users U] [--windows W] [--window S] [--rate R]``;
the defaults take about a minute and a half (filling the input is half of it). The job commits only when
it stops: a commit stalls a container for seconds on a loaded machine, with or without queries.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb.config import Config
from samza_nb.runtime.processes import ContainerProcesses
from samza_nb.systems.log import DurableLog

ROOT = Path(__file__).resolve().parents[1]
PARTITIONS = 4


class CountJson:
    """The job's task: parse the message, count it under its user (the key) in the store ``counts``."""

    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        user = json.loads(envelope.message)["user"]
        self.counts.put(user, (self.counts.get(user) or 0) + 1)


def fill(base: Path, messages: int, users: int) -> Counter[str]:
    """``messages`` JSON messages over ``users`` users, keyed by user; the count sent per user."""
    log = DurableLog(base / "log")
    log.create_stream("events", PARTITIONS)
    sent: Counter[str] = Counter()
    batch: list[tuple[str, str, None]] = []
    for i in range(messages):
        user = f"u{i % users}"
        sent[user] += 1
        batch.append((user, f'{{"user": "{user}", "n": {i}}}', None))
        if len(batch) == 10_000:
            log.send_batch("events", batch)
            batch.clear()
    log.send_batch("events", batch)
    log.flush()
    log.close()
    return sent


def job_config(base: Path) -> Config:
    return Config(
        {
            "job.name": "live-queries-bench",
            "task.inputs": "log.events",
            "systems.log.samza.offset.default": "oldest",
            "job.container.count": "2",
            "job.logged.store.base.dir": str(base),
            # A commit here stalls a container for seconds on a loaded machine (DuckDB writing the
            # store down; so does main's code): the windows measure processing, the stop commits.
            "task.commit.ms": "600000",
            "cluster-manager.container.status.interval.ms": "50",
            "task.class": "benchmarks.live_queries.CountJson",
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.key.serde": "string",
            "stores.counts.msg.serde": "long",
        }
    )


class Prober:
    """Looks users up over HTTP at ``rate`` per second in all while :attr:`active`: ``clients`` threads, each
    with its own kept-alive connection at ``rate / clients`` (so a slow answer does not lower the rate)."""

    def __init__(self, url: str, token: str, sent: Counter[str], rate: float, clients: int = 4) -> None:
        self._url = urlsplit(url)
        self._headers = {"Authorization": f"Bearer {token}"}
        self._sent = sent
        self._users = sorted(sent)
        self._interval = clients / rate
        self.active = threading.Event()
        self.stopped = threading.Event()
        self.latencies_ms: list[float] = []
        self.problems: list[str] = []
        self._threads = [threading.Thread(target=self._run, args=(n,), daemon=True) for n in range(clients)]
        for thread in self._threads:
            thread.start()

    def _run(self, number: int) -> None:
        chooser = random.Random(number)
        conn = http.client.HTTPConnection(self._url.hostname or "127.0.0.1", self._url.port, timeout=30)
        last: dict[str, int] = {}  # what this client saw of each user (its answers come in order)
        due = time.perf_counter()
        while not self.stopped.is_set():
            if not self.active.wait(0.05):
                due = time.perf_counter()
                continue
            user = chooser.choice(self._users)
            started = time.perf_counter()
            conn.request("GET", f"/stores/counts/keys/{quote(user)}", headers=self._headers)
            response = conn.getresponse()
            body = json.loads(response.read())
            self.latencies_ms.append((time.perf_counter() - started) * 1000)
            self._check(user, response.status, body, last)
            due += self._interval  # a fixed rate: a slow answer does not push the next ones back
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)  # pacing the probe rate, not synchronisation
        conn.close()

    def _check(self, user: str, status: int, body: Any, last: dict[str, int]) -> None:
        if body.get("found") is False:
            return  # not processed yet: a user's first message may still be ahead of the job
        value = body.get("value") if status == 200 else None
        if not isinstance(value, int) or not last.get(user, 0) <= value <= self._sent[user]:
            self.problems.append(f"{user}: answered {status} {body} after {last.get(user)}")
            return
        last[user] = value

    def close(self) -> None:
        self.stopped.set()
        self.active.set()
        for thread in self._threads:
            thread.join()


async def measure(messages: int, users: int, windows: int, window_s: float, rate: float) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="samza-live-queries-") as directory:
        base = Path(directory)
        started = time.perf_counter()
        sent = fill(base, messages, users)
        print(f"filled {messages:,} messages in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        cwd = os.getcwd()
        os.chdir(ROOT)  # the containers import benchmarks.live_queries from the repository
        processes = ContainerProcesses(job_config(base), python_path=(str(ROOT),))
        try:
            await processes.start()
        finally:
            os.chdir(cwd)
        watch = asyncio.create_task(processes.watch(lambda: None, 0.1))
        coordinator = processes.coordinator
        prober: Prober | None = None
        try:
            while not both_running(coordinator.job_status()):
                if watch.done():
                    raise RuntimeError(f"the job ended early: {processes.failure()}")
                await asyncio.sleep(0.02)  # polling the coordinator's status (an observed condition)
            prober = Prober(coordinator.url, coordinator.store_token, sent, rate)
            rates: dict[bool, list[float]] = {False: [], True: []}
            for index in range(windows):
                queried = index % 2 == 1
                if queried:
                    prober.active.set()
                before, started = coordinator.job_status().processed, time.perf_counter()
                await asyncio.sleep(window_s)  # a measurement window
                after, elapsed = coordinator.job_status().processed, time.perf_counter() - started
                prober.active.clear()
                if after >= messages:
                    print(f"window {index}: the input ran out (figures undercount): give more --messages")
                rates[queried].append((after - before) / elapsed)
                print(f"window {index}: queried={queried} {rates[queried][-1]:,.0f} msgs/s", file=sys.stderr)
            busy = sorted(prober.latencies_ms)
            while coordinator.job_status().processed < messages:  # the rest of the input, then stop
                await asyncio.sleep(0.05)  # polling the coordinator's status (an observed condition)
            prober.active.set()  # the same lookups of the job now idle (its input all processed)
            while len(prober.latencies_ms) < len(busy) + min(len(busy), 200):
                await asyncio.sleep(0.05)  # polling the prober's count (an observed condition)
            prober.close()
            idle = sorted(prober.latencies_ms[len(busy) :])
            processes.stop()
            await watch
        finally:
            if prober is not None:
                prober.close()
            if not watch.done():
                processes.stop()
                await watch
            await processes.close()
        final = read_final_counts(base)
        same("each user's committed count after the stop", final, dict(sent))
        if prober.problems:
            raise RuntimeError(f"lookups answered wrongly: {prober.problems[:3]}")
        return {
            "unqueried": statistics.median(rates[False]),
            "queried": statistics.median(rates[True]),
            "lookups": len(busy),
            "p50": statistics.median(busy),
            "p99": percentile(busy, 0.99),
            "idle p50": statistics.median(idle),
            "idle p99": percentile(idle, 0.99),
        }


def percentile(ordered: list[float], q: float) -> float:
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def both_running(status: Any) -> bool:
    """Both containers process messages and serve queries."""
    reports = [status.reports.get(cid) for cid in status.containers]
    return all(r is not None and r.processed > 0 and r.query_url is not None for r in reports)


def read_final_counts(base: Path) -> dict[str, int]:
    """Every user's count in the state files the containers committed when they stopped."""
    from samza_nb.storage.duckdb.job_files import state_directory
    from samza_nb.storage.sql.query import query_store

    config = job_config(base)
    paths = sorted(state_directory(config).glob("partition-*.duckdb"))
    result = query_store(paths, "counts", "SELECT key, value FROM counts", config)
    return {str(key): int(value) for key, value in result.rows}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=1_500_000)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--windows", type=int, default=8, help="alternating unqueried/queried windows")
    parser.add_argument("--window", type=float, default=1.5, help="seconds per window")
    parser.add_argument("--rate", type=float, default=100.0, help="lookups per second while queried")
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.messages, args.users, args.windows, args.window, args.rate))
    # the input may run out before a window (a quick machine, a small --messages): no rate to compare
    ratio = figures["queried"] / figures["unqueried"] if figures["unqueried"] else float("nan")
    print(
        f"2 containers, {args.users} users: unqueried {figures['unqueried']:,.0f} msgs/s, queried "
        f"{args.rate:g}/s {figures['queried']:,.0f} msgs/s, ratio {ratio:.3f}; "
        f"{figures['lookups']} lookups: p50 {figures['p50']:.2f} ms, p99 {figures['p99']:.2f} ms; of the job "
        f"idle: p50 {figures['idle p50']:.2f} ms, p99 {figures['idle p99']:.2f} ms"
    )
    return figures


if __name__ == "__main__":
    main()
