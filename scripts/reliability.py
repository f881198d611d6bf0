"""``make reliability``: run the crash points, the file faults, the fuzzing, the Kafka faults and the soak,
then print the reliability table (and write it into the documentation's reliability page,
docs/figures/reliability.md, between its markers).

Each phase is a pytest run with ``tests.reliability_plugin`` recording one JSON line per test into the
output directory (the crash-point cases add their own outcome lines); the soak is ``benchmarks/soak.py
--json``. The table is made only from what this run wrote: a figure in it is a figure this run measured.
The exit status is 0 only when every phase passed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "<!-- reliability table: written by `make reliability` -->"
END = "<!-- end of the reliability table -->"


@dataclass(frozen=True)
class Phase:
    """One pytest run of the report: its name (the JSON lines file), title and pytest arguments."""

    name: str
    title: str
    args: tuple[str, ...]


PHASES = (
    Phase("crash", "Crash points", ("tests/faults",)),
    Phase(
        "files",
        "Torn, corrupt and unusable files; kill -9 at random points",
        # the Kafka faults are a phase of their own; the Spark tests have none
        ("-m", "faults", "tests/unit", "tests/integration", "--ignore=tests/integration/kafka"),
    ),
    Phase(
        "fuzz",
        "Fuzzed inputs",
        ("tests/fuzz", "--hypothesis-show-statistics"),
    ),
    Phase("kafka", "Kafka faults", ("-m", "faults", "tests/integration/kafka")),
)


def run_phase(phase: Phase, out: Path, runs: int) -> float:
    """Run ``phase``'s tests (recording into ``out``); returns its seconds."""
    env = os.environ | {
        "SAMZA_NB_RELIABILITY_DIR": str(out),
        "SAMZA_NB_RELIABILITY_PHASE": phase.name,
        "SAMZA_NB_CRASH_RUNS": str(runs),
    }
    command = [sys.executable, "-m", "pytest", "-p", "tests.reliability_plugin", "-p", "no:cacheprovider"]
    command += ["-q", "--timeout=600", *phase.args]
    print(f"== {phase.title}: {' '.join(command[1:])}", flush=True)
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, env=env, check=False)
    return time.monotonic() - started


def run_soak(out: Path, messages: int) -> float:
    """Run the soak benchmark (its figures into ``out/soak.json``); returns its seconds."""
    command = [
        sys.executable,
        "benchmarks/soak.py",
        "--messages",
        str(messages),
        "--json",
        str(out / "soak.json"),
    ]
    print(f"== Soak: {' '.join(command[1:])}", flush=True)
    started = time.monotonic()
    subprocess.run(command, cwd=ROOT, check=False)
    return time.monotonic() - started


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The JSON lines of ``path`` (none when it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def humanize(nodeid: str) -> str:
    """``tests/x/test_y.py::test_a_b[p]`` → ``a b [p]``: a test's name as a sentence."""
    name = nodeid.rsplit("::", 1)[-1]
    base, _, param = name.partition("[")
    words = base.removeprefix("test_").replace("_", " ")
    return f"{words} [{param}" if param else words


def _count(n: int) -> str:
    return f"{n:,}"


def crash_table(out: Path, runs: int) -> tuple[list[str], bool]:
    """The crash points' rows: point x outcome over its runs (from the cases' own outcome lines)."""
    tests = read_lines(out / "crash.jsonl")
    outcomes = read_lines(out / "crash_points.jsonl")
    failed = [t for t in tests if t["outcome"] != "passed"]
    by_point: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in outcomes:
        by_point[line["point"]].append(line)
    rows = [
        "| crash point | scenario | runs | messages | lost | duplicates | state | guarantee |",
        "|---|---|---|---|---|---|---|---|",
    ]
    ok = not failed and bool(by_point)
    for point in sorted(by_point):
        lines = by_point[point]
        lost = sum(line["lost"] for line in lines)
        exact = all(line["exact"] for line in lines)
        done = len(lines)
        ok = ok and lost == 0 and done >= runs
        rows.append(
            f"| `{point}` | {lines[0]['scenario']} | {done} of {runs} | {_count(lines[0]['messages'])} | "
            f"{lost} | "
            f"{', '.join(str(line['duplicates']) for line in lines)} | {'exact' if exact else 'not exact'} | "
            f"{lines[0]['guarantee']} |"
        )
    for test in failed:
        rows.append(f"| FAILED: {humanize(test['nodeid'])} | | | | | | | |")
    return rows, ok


def fuzz_table(out: Path) -> tuple[list[str], bool]:
    """The fuzz properties' rows: property x cases x examples tried."""
    tests = read_lines(out / "fuzz.jsonl")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for test in tests:
        groups[test["nodeid"].split("[", 1)[0]].append(test)
    rows = ["| property | cases | examples tried | result |", "|---|---|---|---|"]
    ok = bool(tests)
    for nodeid in sorted(groups):
        cases = groups[nodeid]
        passed = sum(case["outcome"] == "passed" for case in cases)
        examples = sum(case["examples"] or 0 for case in cases)
        ok = ok and passed == len(cases)
        module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
        result = "passed" if passed == len(cases) else f"{len(cases) - passed} FAILED"
        rows.append(f"| {module}: {humanize(nodeid)} | {len(cases)} | {_count(examples)} | {result} |")
    return rows, ok


def test_table(out: Path, phase: str) -> tuple[list[str], bool]:
    """A phase of plain tests: each fault's test x result x seconds."""
    tests = read_lines(out / f"{phase}.jsonl")
    rows = ["| fault | result | seconds |", "|---|---|---|"]
    for test in sorted(tests, key=lambda t: t["nodeid"]):
        module = test["nodeid"].split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py").removeprefix("test_")
        rows.append(f"| {module}: {humanize(test['nodeid'])} | {test['outcome']} | {test['seconds']:.1f} |")
    return rows, bool(tests) and all(t["outcome"] == "passed" for t in tests)


def soak_table(out: Path) -> tuple[list[str], bool]:
    """The soak's figures at 10% and at 100% of its messages."""
    path = out / "soak.json"
    if not path.exists():
        return ["(the soak did not write its figures)"], False
    soak = json.loads(path.read_text(encoding="utf-8"))
    mib = 1024 * 1024
    rows = [
        f"{_count(soak['messages'])} messages, {_count(soak['live_keys'])} live keys, a commit every 100 ms: "
        f"{_count(round(soak['msgs_per_s']))} msg/s over {soak['seconds']:.0f} s.",
        "",
        "| figure | at 10% | at 100% | growth |",
        "|---|---|---|---|",
        f"| RSS (MiB) | {soak['rss_mb_10']:.0f} | {soak['rss_mb_100']:.0f} | {soak['rss_growth']:+.1%} |",
        f"| open file descriptors | {soak['fds_10']} | {soak['fds_100']} | "
        f"{soak['fds_100'] - soak['fds_10']:+d} |",
        f"| state file + its `.wal` (MiB) | {soak['state_bytes_10'] / mib:.1f} | "
        f"{soak['state_bytes_100'] / mib:.1f} | "
        f"{soak['state_bytes_100'] / max(soak['state_bytes_10'], 1) - 1:+.0%} "
        f"(bound {soak['state_bytes_bound'] / mib:.1f}: 1.5 x + the 16 MiB `.wal` checkpoint threshold) |",
        f"| of which `.wal` (MiB) | {soak['wal_bytes_10'] / mib:.1f} | {soak['wal_bytes_100'] / mib:.1f} | |",
        "",
        f"After the job stopped the state file is {soak['state_bytes_final'] / mib:.1f} MiB for "
        f"{_count(soak['store_keys'])} keys ({soak['state_bytes_final'] / max(soak['store_keys'], 1):.0f} "
        f"bytes a key); the changelog is {soak['changelog_bytes_100'] / mib:.0f} MiB (the durable log has no "
        "compaction: it grows with the messages, not the keys).",
    ]
    return rows, bool(soak.get("passed"))


def render(out: Path, runs: int, seconds: dict[str, float]) -> tuple[str, bool]:
    """The whole table as markdown, and whether everything passed."""
    sections: list[tuple[str, tuple[list[str], bool]]] = [
        (
            f"Crash points: SIGKILL at each named point, then a restart to completion ({runs} runs each)",
            crash_table(out, runs),
        ),
        ("Torn, corrupt and unusable files; kill -9 at random points", test_table(out, "files")),
        ("Fuzzed inputs (hypothesis): each returns a value or raises samza_nb's own error", fuzz_table(out)),
        (
            "Kafka faults (the suite's broker, a broker of the test's own, a forwarder killed or frozen)",
            test_table(out, "kafka"),
        ),
        ("Soak (`benchmarks/soak.py`): a stateful job on the durable log", soak_table(out)),
    ]
    total = sum(seconds.values())
    lines = [
        f"`make reliability`, last run: {time.strftime('%Y-%m-%d')}, {total / 60:.1f} minutes "
        f"({', '.join(f'{name} {s:.0f} s' for name, s in seconds.items())}).",
        "",
        f"Machine: {machine()}.",
    ]
    ok = True
    for title, (rows, passed) in sections:
        ok = ok and passed
        lines += ["", f"**{title}**{'' if passed else ' — FAILED'}", "", *rows]
    return "\n".join(lines), ok


def machine() -> str:
    """The machine the run measured: CPUs, architecture, kernel and Python."""
    return (
        f"{os.cpu_count()} CPUs ({platform.machine()}), {platform.system()} {platform.release()}, "
        f"Python {platform.python_version()}"
    )


def write_page(page: Path, table: str) -> None:
    """Put ``table`` between the page's markers (which must be there)."""
    text = page.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{page}: no reliability markers ({BEGIN} ... {END})")
    page.write_text(pattern.sub(lambda _: f"{BEGIN}\n{table}\n{END}", text), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the phases, print the table, write it into the reliability page when asked; 0 when all
    passed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "reliability", help="where to record")
    parser.add_argument("--runs", type=int, default=3, help="runs of each crash point (default 3)")
    parser.add_argument("--soak-messages", type=int, default=5_000_000, help="messages of the soak")
    parser.add_argument("--only", nargs="*", help="phases to run (crash files fuzz kafka soak; default all)")
    parser.add_argument(
        "--page",
        type=Path,
        help="write the table into this page between its markers (docs/figures/reliability.md)",
    )
    parser.add_argument("--render-only", action="store_true", help="the table of the last run, run nothing")
    args = parser.parse_args(argv)
    wanted: Iterable[str] = args.only or [*(p.name for p in PHASES), "soak"]
    seconds: dict[str, float] = {}
    timing = args.out / "seconds.json"
    if args.render_only:
        seconds = json.loads(timing.read_text(encoding="utf-8"))
        wanted = []
    else:
        shutil.rmtree(args.out, ignore_errors=True)
        args.out.mkdir(parents=True)
    for phase in PHASES:
        if phase.name in wanted:
            seconds[phase.name] = run_phase(phase, args.out, args.runs)
    if "soak" in wanted:
        seconds["soak"] = run_soak(args.out, args.soak_messages)
    if not args.render_only:
        timing.write_text(json.dumps(seconds), encoding="utf-8")
    table, ok = render(args.out, args.runs, seconds)
    print("\n" + table)
    if args.page:
        write_page(args.page, table)
        print(f"\n(written into {args.page})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
