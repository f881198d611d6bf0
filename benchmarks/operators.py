"""The high-level API: a map -> partition_by -> tumbling-window count application, each figure a ratio
to a baseline measured in the same run.

(a) The application over ``--messages`` messages (one partition of ``{"user": u}`` dicts with event
    times 0, 1, 2, ...; ``--keys`` users; ``--window`` ms tumbling windows), run by
    ``TestRunner.of(App)`` on the in-memory system, its intermediate stream on the in-memory system too.
    Baseline: the same computation written as one low-level task (``OneHop``): the same map, the count
    per (window start, user) in the same kind of store (DuckDB, pickle key and value serdes, the same
    ``put`` per message of the same key and value the window operator writes), and the panes emitted at
    end-of-stream as ``WindowPane`` messages to the same output stream. The application's panes also
    fire at end-of-stream (the input carries no watermarks), so both do the same work but the hop.
    Extra rows: ``TwoHop``, the same computation hand-written as a low-level task that repartitions
    through an intermediate stream itself (keyed sends to it, the count as it comes back), as a ratio
    to the same baseline, so the cost of the hop itself is visible; and the application as a ratio to
    ``TwoHop``.
(b) The application with its intermediate stream on the durable log (in a temporary directory: JSON
    intermediate serde, fsync at each commit), as a ratio to (a)'s baseline.

Every job commits each second (``task.commit.ms = 1000``, what the planner gives an application's
jobs), the baselines too. As in ``core.py``, the input is built before the clock starts and then frozen
out of the garbage collector (``gc.freeze``; ``--no-freeze`` measures without). Every run checks the
panes the job emitted.

Each workload is measured right after a baseline run of its own and its ratio taken to that one (the
speed of this shared machine drifts over seconds); the ratio of each run is printed after the median.

Run: ``python benchmarks/operators.py [--messages N] [--keys K] [--window MS] [--runs R]``; prints
medians of R runs.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb import OutgoingMessageEnvelope, SystemStream
from samza_nb.api.task import RequestScope
from samza_nb.operators import StreamApplication, WindowPane, Windows
from samza_nb.testing import Message, TestRunner

FREEZE = True
KEYS = 100
WINDOW_MS = 10_000
COMMIT_MS = 1000
"""Every job commits this often: what the planner gives an application's jobs (the durable log shows
what a task sent when it commits), so the low-level baselines commit as often."""

OUT = SystemStream("test", "out")
MID = SystemStream("test", "mid")
STORE = "w"
STORE_CONFIG = {
    f"stores.{STORE}.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    f"stores.{STORE}.key.serde": "pickle",
    f"stores.{STORE}.msg.serde": "pickle",
}


def user_of(message: dict[str, int]) -> int:
    return message["user"]


def count(message: Any, n: int) -> int:
    return n + 1


def zero() -> int:
    return 0


def key_of(kv: Any) -> Any:
    return kv.key


class App(StreamApplication):
    """map -> partition_by -> tumbling count per user -> out."""

    def describe(self, app: Any) -> None:
        (
            app.get_input_stream("in")
            .map(user_of)
            .partition_by(lambda user: user, op_id="by-user")
            .window(Windows.tumbling(WINDOW_MS, zero, count, key_fn=key_of), op_id=STORE)
            .send_to(app.get_output_stream("out"))
        )


class _Counting:
    """The count of the window operator, by hand: an index in memory, every change put to the store
    under the key and value the window operator writes, the panes sent at end-of-stream."""

    def init(self, context: Any) -> None:
        self.store = context.get_store(STORE)
        self.open: dict[tuple[int, Any], int] = {}

    def count(self, user: Any, timestamp: int) -> None:
        start = timestamp - timestamp % WINDOW_MS
        key = (start, user)
        n = self.open[key] = self.open.get(key, 0) + 1
        self.store.put(key, (n,))

    def emit(self, collector: Any) -> None:
        delete = self.store.delete
        for (start, user), n in sorted(self.open.items(), key=lambda item: (item[0][0], item[0][1])):
            end = start + WINDOW_MS
            collector.send(OutgoingMessageEnvelope(OUT, WindowPane(user, start, end, n), timestamp=end - 1))
            delete((start, user))
        self.open.clear()


class OneHop(_Counting):
    """The application as one low-level task: map, count, panes at end-of-stream."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.count(user_of(envelope.message), envelope.timestamp)

    def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
        self.emit(collector)


class TwoHop(_Counting):
    """The application by hand through an intermediate stream: the mapped user sent keyed by itself to
    ``mid`` (with the event time), counted as it comes back; the input's end is sent through ``mid``
    (a ``None`` message) and ends the job when it comes back."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.ssp.stream == "in":
            user = user_of(envelope.message)
            collector.send(OutgoingMessageEnvelope(MID, user, user, user, None, envelope.timestamp))
        elif envelope.message is not None:
            self.count(envelope.message, envelope.timestamp)
        else:
            self.emit(collector)
            coordinator.commit(RequestScope.CURRENT_TASK)
            coordinator.shutdown(RequestScope.CURRENT_TASK)

    def on_partition_end(self, ssp: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(MID, None, partition=0))


def expected_panes(messages: int) -> list[tuple[int, int, int]]:
    """The panes the input makes, (window start, user, count) in order: message ``i`` is user ``i % KEYS``
    at event time ``i``."""
    counts: dict[tuple[int, int], int] = {}
    for i in range(messages):
        key = (i - i % WINDOW_MS, i % KEYS)
        counts[key] = counts.get(key, 0) + 1
    return sorted((start, user, n) for (start, user), n in counts.items())


def runner_for(kind: str, inputs: list[Message], state: str) -> TestRunner:
    """The runner of workload ``kind``: ``one-hop``, ``two-hop``, ``app`` or ``app-log``."""
    config = {"job.logged.store.base.dir": state, "task.commit.ms": str(COMMIT_MS)}
    if kind == "one-hop":
        runner = TestRunner.of(OneHop).add_config({**config, **STORE_CONFIG})
    elif kind == "two-hop":
        runner = TestRunner.of(TwoHop).add_config(
            {**config, **STORE_CONFIG, "task.inputs": "test.in,test.mid"}
        )
        runner.broker.create_stream("mid", 1)
    else:
        runner = TestRunner.of(App)
        if kind == "app-log":
            config["job.default.system"] = "log"
        runner.add_config(config)
    return runner.add_input("in", inputs).add_output("out")


def timed(kind: str, inputs: list[Message]) -> float:
    """Messages per second of workload ``kind`` over ``inputs`` (the panes it emitted checked)."""
    with tempfile.TemporaryDirectory() as state:
        runner = runner_for(kind, inputs, state)
        gc.collect()
        if FREEZE:
            gc.freeze()
        try:
            start = time.perf_counter()
            result = runner.run(timeout=1800)
            elapsed = time.perf_counter() - start
        finally:
            if FREEZE:
                gc.unfreeze()
        panes = result.output("out")[0]
    got = sorted((p.start_ms, p.key, p.value) for p in panes)
    same(f"{kind}: the panes (window start, user, count)", got, expected_panes(len(inputs)))
    same(f"{kind}: the panes' ends", {p.end_ms - p.start_ms for p in panes}, {WINDOW_MS})
    return len(inputs) / elapsed


def main(argv: list[str] | None = None) -> int:
    global FREEZE, KEYS, WINDOW_MS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=KEYS, help="distinct users")
    parser.add_argument("--window", type=int, default=WINDOW_MS, help="tumbling window size (ms)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-log", action="store_true", help="skip (b), the durable log")
    parser.add_argument("--no-freeze", action="store_true", help="leave the input to the collector")
    args = parser.parse_args(argv)
    FREEZE, KEYS, WINDOW_MS = not args.no_freeze, args.keys, args.window
    inputs = [Message({"user": i % KEYS}, timestamp=i) for i in range(args.messages)]
    kinds = ["app", "two-hop"] + ([] if args.no_log else ["app-log"])
    timed("app", inputs[:20_000])  # warm-up: imports, the first DuckDB connection
    # Each workload right after a baseline run of its own (this machine's speed drifts over seconds), so
    # each ratio compares runs that were close in time.
    pairs: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for _ in range(args.runs):
        for kind in kinds:
            baseline = timed("one-hop", inputs)
            pairs[kind].append((baseline, timed(kind, inputs)))

    def to_baseline(kind: str) -> list[float]:
        return [rate / base for base, rate in pairs[kind]]

    # (name, the workload whose rate it shows, its ratio in each run, what the ratio is to)
    rows = [
        ("(a) application, in-memory hop", "app", to_baseline("app"), "one-hop"),
        ("    two-hop low-level task", "two-hop", to_baseline("two-hop"), "one-hop"),
        (
            "    application / two-hop task",
            "app",
            [a / t for (_, a), (_, t) in zip(pairs["app"], pairs["two-hop"], strict=True)],
            "two-hop",
        ),
    ]
    if not args.no_log:
        rows.append(("(b) application, durable-log hop", "app-log", to_baseline("app-log"), "one-hop"))
    print(
        f"medians of {args.runs} runs: map -> partition_by -> tumbling count, {args.messages:,} messages, "
        f"{KEYS} users, {WINDOW_MS} ms windows{'' if FREEZE else ', input not frozen'}"
    )
    baselines = [base for kind in kinds for base, _ in pairs[kind]]
    print(f"{'one-hop low-level task (baseline)':36} {statistics.median(baselines):12,.0f} msgs/s")
    for name, kind, ratios, baseline in rows:
        rate = statistics.median(rate for _, rate in pairs[kind])
        runs = " ".join(f"{ratio:.3f}" for ratio in ratios)
        print(f"{name:36} {rate:12,.0f} msgs/s  ratio {statistics.median(ratios):.3f} to {baseline} ({runs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
