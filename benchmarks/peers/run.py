"""samza_nb beside Bytewax, streamz and Quix Streams on the same four workloads (a long benchmark: no test
runs it; ``make bench-peers`` sets up ``.venv-peers`` with every library and runs it there).

W1 map + filter with output (``--messages``), W2 keyed count with state (``--messages`` over ``--keys``
keys), W3 an awaited 5 ms call at concurrency 100 (``--async-messages``; the ideal is 20,000 msg/s), W4
Kafka -> Kafka pass-through (``--kafka-messages`` over ``--partitions`` partitions) with the raw aiokafka
and confluent-kafka loops of benchmarks/kafka_passthrough.py as its baselines. benchmarks/peers/
workloads.py defines them; each library's module (peer_*.py) writes them as that library's documentation
does. A local Kafka-protocol broker (DevBroker) serves W4 and every Quix Streams row; their inputs are
written before any clock starts.

Every measurement is its own child process (no library's threads, caches or heap left to the next), run
``--runs`` times interleaved (round 1: W1 with each library, W2 with each, ...; then round 2 ...), each
output checked. A cell is the median rate and the median of its ratios to samza_nb's rate of the same
round; a library that cannot run a workload gets "—" and the reason. The table, the machine, the date and
every library's version go to ``--output`` (docs/performance-peers.md) and to stdout.

Run: ``.venv-peers/bin/python benchmarks/peers/run.py [--messages N] [--runs R] [--only LIBS]``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))  # benchmarks/
sys.path.insert(0, str(HERE))

from table import REFERENCE, Measured, Missing, format_cell, leader, markdown_table  # noqa: E402
from workloads import IDEAL_W3, Params  # noqa: E402

WORKLOADS = {
    "W1": "W1 map + filter with output",
    "W2": "W2 keyed count with state",
    "W3": "W3 awaited 5 ms call, concurrency 100",
    "W4": "W4 Kafka → Kafka pass-through",
}
CONTENDERS = {  # name: (module, attribute holding its workloads)
    REFERENCE: ("peer_samza", "WORKLOADS"),
    "bytewax": ("peer_bytewax", "WORKLOADS"),
    "streamz": ("peer_streamz", "WORKLOADS"),
    "quixstreams": ("peer_quix", "WORKLOADS"),
    "aiokafka loop": ("peer_baselines", "AIOKAFKA"),
    "confluent-kafka loop": ("peer_baselines", "CONFLUENT"),
}
BASELINES = ("aiokafka loop", "confluent-kafka loop")
RESULT = "PEERS-RESULT "
SCRIPTS = {  # the one-file cross-checks a reader can run alone: library -> (script, workloads)
    "streamz": ("standalone_streamz.py", ("W1", "W3")),
    "bytewax": ("standalone_bytewax.py", ("W1", "W2", "W3")),
    "quixstreams": ("standalone_quix.py", ("W1", "W2")),
}


def script(name: str, workload: str, params: Params) -> float | str:
    """The rate the one-file script of ``name`` prints for ``workload`` (its own process), or the last
    line of its error."""
    n = params.async_messages if workload == "W3" else params.messages
    command = [sys.executable, str(HERE / SCRIPTS[name][0]), "--workload", workload, "--messages", str(n)]
    if name == "quixstreams":
        command += ["--bootstrap", params.bootstrap]
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, cwd=ROOT)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        return float(json.loads(lines[-1])["rate"])
    sys.stderr.write(done.stderr[-3000:])
    return ((done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"])[-1]


def child(name: str, workload: str, params: str) -> int:
    """Measure one contender on one workload in this process; print its rate on a RESULT line."""
    module, attribute = CONTENDERS[name]
    run = getattr(importlib.import_module(module), attribute)[workload]
    raw = json.loads(params)
    raw["topics"] = tuple(tuple(topic) for topic in raw["topics"])
    rate = run(Params(**raw))
    print(RESULT + json.dumps({"rate": rate}), flush=True)
    return 0


def measure(name: str, workload: str, params: Params) -> float | str:
    """The rate of one child run, or the last line of its error."""
    command = [sys.executable, __file__, "--child", name, workload, json.dumps(dataclasses.asdict(params))]
    done = subprocess.run(command, capture_output=True, text=True, timeout=3600, cwd=ROOT)
    for line in done.stdout.splitlines():
        if line.startswith(RESULT):
            return float(json.loads(line[len(RESULT) :])["rate"])
    lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit status {done.returncode}"]
    sys.stderr.write(done.stderr[-3000:])
    return lines[-1]


def fill_inputs(params: Params, workloads: list[str], quix: bool, streamz: bool) -> Params:
    """Write the Kafka inputs the chosen rows read; the Params naming their topics."""
    import kafka_io
    from kafka import fill  # benchmarks/kafka.py: W4's input, as kafka_passthrough.py's
    from workloads import w1_input, w2_input

    topics: dict[str, str] = {}
    if quix and "W1" in workloads:
        topics["W1"] = kafka_io.new_topic("w1-in")
        kafka_io.fill_json(params.bootstrap, topics["W1"], w1_input(params.messages))  # type: ignore[arg-type]
    if quix and "W2" in workloads:
        topics["W2"] = kafka_io.new_topic("w2-in")
        messages = w2_input(params.messages, params.keys)
        kafka_io.fill_json(params.bootstrap, topics["W2"], messages, key="key")  # type: ignore[arg-type]
    if "W4" in workloads:
        topics["W4"] = kafka_io.new_topic("w4-in")
        asyncio.run(fill(params.bootstrap, topics["W4"], params.kafka_messages, params.partitions))
        if streamz:
            topics["W4-streamz"] = kafka_io.new_topic("w4-streamz-in")
            messages = params.streamz_kafka_messages
            asyncio.run(fill(params.bootstrap, topics["W4-streamz"], messages, params.partitions))
    return dataclasses.replace(params, topics=tuple(topics.items()))


def cell(
    name: str, workload: str, rates: dict[str, list[float | str]], reference: list[float | str]
) -> Measured | Missing:
    """The median rate of ``name`` and its median ratio to samza_nb's rate of the same rounds."""
    runs = rates[name]
    good = [r for r in runs if isinstance(r, float)]
    if not good:
        return Missing(f"{name} failed on {workload}: {runs[0]}")
    pairs = [
        (r, s) for r, s in zip(runs, reference, strict=True) if isinstance(r, float) and isinstance(s, float)
    ]
    ratio = statistics.median(r / s for r, s in pairs) if pairs and name != REFERENCE else None
    median = statistics.median(good)
    share = median / IDEAL_W3 if workload == "W3" else None
    spread = (max(good) - min(good)) / 2 / median if len(good) > 1 else None
    return Measured(median, ratio, share, spread)


def versions(modules: list[ModuleType]) -> str:
    packages = sorted({p for m in modules for p in m.PACKAGES}, key=str.lower)
    return ", ".join(f"{p} {importlib.metadata.version(p)}" for p in packages)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--child", nargs=3, metavar=("NAME", "WORKLOAD", "PARAMS"), help=argparse.SUPPRESS)
    parser.add_argument("--messages", type=int, default=1_000_000, help="W1 and W2")
    parser.add_argument("--keys", type=int, default=1000, help="W2")
    parser.add_argument("--async-messages", type=int, default=20_000, help="W3")
    parser.add_argument("--kafka-messages", type=int, default=200_000, help="W4")
    parser.add_argument("--partitions", type=int, default=4, help="W4")
    parser.add_argument("--streamz-kafka-messages", type=int, default=100, help="W4 with streamz (5 msg/s)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated libraries besides samza_nb")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--no-cross-check", action="store_true", help="skip the one-file scripts")
    parser.add_argument("--output", default=str(ROOT / "docs" / "performance-peers.md"))
    args = parser.parse_args(argv)
    if args.child:
        return child(*args.child)
    if args.messages % args.keys:
        parser.error(f"--messages ({args.messages}) must be a multiple of --keys ({args.keys})")
    workloads = [w.strip() for w in args.workloads.split(",") if w.strip()]
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"--workloads: unknown {unknown}; known: {list(WORKLOADS)}")
    chosen = [n for n in CONTENDERS if not args.only or n == REFERENCE or n in args.only.split(",")]
    modules = {n: importlib.import_module(CONTENDERS[n][0]) for n in chosen}
    params = Params(
        args.messages,
        args.keys,
        args.async_messages,
        args.kafka_messages,
        args.partitions,
        args.streamz_kafka_messages,
    )
    rates: dict[str, dict[str, list[float | str]]] = {w: {} for w in workloads}
    checks: dict[str, dict[str, list[float | str]]] = {w: {} for w in workloads}  # the scripts' rates

    from samza_nb.runtime.dev_broker import DevBroker

    load = os.getloadavg()[0]
    with DevBroker() as broker:
        params = dataclasses.replace(params, bootstrap=broker.bootstrap_servers)
        params = fill_inputs(params, workloads, "quixstreams" in chosen, "streamz" in chosen)
        for round_ in range(1, args.runs + 1):
            for workload in workloads:
                for name in chosen:
                    attribute = getattr(modules[name], CONTENDERS[name][1])
                    if workload not in attribute:
                        continue
                    rate = measure(name, workload, params)
                    rates[workload].setdefault(name, []).append(rate)
                    shown = f"{rate:12,.0f} msg/s" if isinstance(rate, float) else f"FAILED: {rate}"
                    print(f"round {round_} {workload} {name:22} {shown}", flush=True)
                    if not args.no_cross_check and workload in SCRIPTS.get(name, ("", ()))[1]:
                        rate = script(name, workload, params)
                        checks[workload].setdefault(name, []).append(rate)
                        shown = f"{rate:12,.0f} msg/s" if isinstance(rate, float) else f"FAILED: {rate}"
                        print(f"round {round_} {workload} {name + ' (script)':22} {shown}", flush=True)

    peers = [n for n in chosen if n not in BASELINES]
    rows = []
    leads: list[str] = []
    for workload in workloads:
        found = rates[workload]
        reference = found.get(REFERENCE, ["samza_nb not run"] * args.runs)
        cells: dict[str, Measured | Missing] = {}
        for name in peers:
            reasons = modules[name].UNSUPPORTED
            cells[name] = (
                Missing(f"{name}, {workload}: {reasons[workload]}")
                if workload in reasons
                else (
                    cell(name, workload, found, reference)
                    if name in found
                    else Missing("not measured in this run")
                )
            )
        rows.append((WORKLOADS[workload], cells))
        good = {n: [r for r in runs if isinstance(r, float)] for n, runs in found.items() if n in peers}
        leads.append(f"- {WORKLOADS[workload]}: {leader(cells, good)}")
    report = [
        "# samza_nb beside its peers",
        "",
        "Written by `make bench-peers` (benchmarks/peers/run.py); only the latest run, no history.",
        "",
        f"- date: {datetime.date.today().isoformat()}",
        f"- machine: {os.cpu_count()} CPUs ({platform.machine()}), {platform.system()} {platform.release()},"
        f" Python {platform.python_version()}; shared with other work while measured (load average"
        f" {load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end: on a loaded machine W3's"
        " calls wait for the CPU, so its share of the ideal says more about the machine than the library)",
        f"- versions: {versions(list(modules.values()))}",
        f"- sizes: W1, W2 {args.messages:,} messages (W2 over {args.keys:,} keys),"
        f" W3 {args.async_messages:,}, W4 {args.kafka_messages:,} of 100 B over {args.partitions} partitions"
        f" (streamz: {args.streamz_kafka_messages:,});"
        f" medians of {args.runs} interleaved runs, each in its own process, each output checked",
        "",
        "Each cell: messages per second, then in brackets the median ratio to samza_nb's rate in the same"
        " round (x2.00: twice as fast as samza_nb, x0.50: half as fast). W3 also gives the share of its"
        " ideal (100 calls of 5 ms in flight: 20,000 msg/s).",
        "",
        markdown_table(peers, rows),
        "",
        "Who leads each row (a lead is claimed only when the leader's slowest run beats every other"
        " library's fastest run, so no single run, and no oddity of one venv, makes a lead):",
        "",
        *leads,
    ]
    crossed = [(w, n) for w in workloads for n in checks[w]]
    if crossed:
        report += [
            "",
            "Cross-check: each peer's one-file script (benchmarks/peers/standalone_*.py, runnable alone) in"
            " the same rounds, beside the harness's figure for that library (in brackets: the median ratio of"
            " the script's rate to the harness's in the same round; near x1.00 when the two agree):",
            "",
            "| workload | library | harness | script |",
            "|---|---|---|---|",
        ]
        for workload, name in crossed:
            harness = cell(name, workload, rates[workload], rates[workload][name])
            alone = cell(name, workload, {name: checks[workload][name]}, rates[workload][name])
            texts = [format_cell(c, []) if isinstance(c, Measured) else c.reason for c in (harness, alone)]
            report.append(f"| {workload} | {name} | {texts[0].split(' (x')[0]} | {texts[1]} |")
    if "W4" in workloads and any(b in chosen for b in BASELINES):
        reference = rates["W4"].get(REFERENCE, ["samza_nb not run"] * args.runs)
        base = [(b, {"W4": cell(b, "W4", rates["W4"], reference)}) for b in BASELINES if b in rates["W4"]]
        report += [
            "",
            "W4's baselines, the raw client loops of benchmarks/kafka_passthrough.py, in the same rounds"
            " (in brackets: the ratio to samza_nb's W4):",
            "",
            markdown_table(["W4"], base).replace("| workload |", "| baseline |", 1),
        ]
    report += ["", NOTES]
    text = "\n".join(report) + "\n"
    Path(args.output).write_text(text, encoding="utf-8")
    print(text)
    return 0


NOTES = """How each library runs the workloads (benchmarks/peers/peer_*.py):

- samza_nb: low-level tasks (the README's quickstart) run by `TestRunner` on the in-memory system for
  W1-W3 (W1 and W3 send with `collector.send_to(stream, value)`, W2 keyed envelopes; W2's counts in a
  DuckDB store, string keys, long values; W3 an `async def process` with `task.max.concurrency` = 100),
  the job of benchmarks/kafka_passthrough.py run by `LocalJobRunner` on the Kafka system for W4.
  Installed into the peers environment (`pip install -e .[kafka]`), so it runs on the same interpreter
  and the same shared dependencies as the others.
- bytewax: a `Dataflow` of `bytewax.operators` run by `bytewax.testing.run_main` (one worker),
  `TestingSource(batch_size=1000)` (`KafkaSource`'s default batch; `TestingSource`'s own default of 1 is
  for tests) to `TestingSink`; W2 `key_on` + `stateful_map` (state in memory, no recovery store
  configured); W3 `flat_map_batch` over batches of 100 (the workload's concurrency) awaited with
  `asyncio.gather`; W4 `KafkaSource(tail=False)` to `KafkaSink`.
- streamz: `Stream().map().filter().sink_to_list()` fed by `emit` (W1), `map_async(parallelism=100)` on an
  asynchronous stream fed by `await source.emit(x)` (W3: streamz's documented form; `emit` waits for a
  free slot, so 100 calls stay in flight), `Stream.from_kafka` into `to_kafka` (W4). Its W4 copies a
  topic of its own with fewer messages (`--streamz-kafka-messages`): `from_kafka` waits for each
  message's delivery report before it polls the next, and `to_kafka` serves delivery reports every 0.2 s,
  so it copies about 5 messages a second whatever the size (the 200,000 of the other rows would take 11
  hours).
- quixstreams: an `Application` with its defaults and a `StreamingDataFrame` (`apply`, `filter`, stateful
  `apply` on its RocksDB store with its default changelog topic, `to_topic`), `run(count=...)`. (Quix sets
  the changelog's retention from the input topic's `retention.ms`, which the suite's broker reports only
  when the topic was created with one: the inputs are.) It reads only from Kafka, so its W1 and W2 run
  Kafka → Kafka on the same broker (JSON values on one partition, written before the clock starts): they
  include consuming, deserializing and producing, which the in-memory rows do not.

Clocks: in-memory rows time the whole run (start-up included) with the prepared input frozen out of the
garbage collector; Kafka rows (W4, quixstreams' W1 and W2) time from the first message seen to the last
output acknowledged, as benchmarks/kafka_passthrough.py does."""


if __name__ == "__main__":
    raise SystemExit(main())
