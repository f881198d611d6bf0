"""Cold start: ``samza-nb run`` of a word count, from the launch of the process to its first message.

A fresh directory holds a file input of ``--lines`` lines and a word-count task (the example's
``WordCountTask``) that writes the wall-clock time of its first message to a file. Each run launches
``python -m samza_nb run --config-path job.properties --no-progress`` in a new process (embedded DuckDB
checkpoints, the file system) and takes the time from just before the launch to the first message; the
baseline is ``python -c pass`` (the interpreter's own start) launched the same way, interleaved with the
runs. Prints medians of ``--runs`` and where the import time goes (``-X importtime`` of one more run,
the packages that cost most).

Run: ``python benchmarks/cold_start.py [--runs 5] [--lines 1000]``. The issue's target: <= 0.35 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.output_check import same  # noqa: E402 (after the path is set)

PHRASES = ["the quick brown fox", "jumps over", "the lazy dog"]

TASK = """
import time
from examples.wordcount.wordcount import WordCountTask

class FirstMessageMarked(WordCountTask):
    marked = False

    def process(self, envelope, collector, coordinator):
        if not FirstMessageMarked.marked:
            FirstMessageMarked.marked = True
            with open("first.txt", "w") as out:
                out.write(repr(time.time()))
        super().process(envelope, collector, coordinator)
"""

CONFIG = """job.name = coldstart
task.class = cold_task.FirstMessageMarked
task.inputs = file.lines
systems.file.samza.factory = samza_nb.systems.file.FileSystemFactory
systems.file.streams.lines.path = input.txt
systems.file.streams.counts.path = counts.txt
systems.file.samza.offset.default = oldest
wordcount.output = file.counts
job.logged.store.base.dir = state
"""


def prepare(directory: Path, lines: int) -> None:
    """The job's files in ``directory``."""
    (directory / "cold_task.py").write_text(TASK)
    (directory / "job.properties").write_text(CONFIG)
    (directory / "input.txt").write_text("".join(f"{PHRASES[i % 3]}\n" for i in range(lines)))


def expected_counts(lines: int) -> dict[str, int]:
    """Each word's count in the input ``prepare`` writes."""
    counts: dict[str, int] = {}
    for i in range(lines):
        for word in PHRASES[i % 3].split():
            counts[word] = counts.get(word, 0) + 1
    return counts


def environment() -> dict[str, str]:
    """This environment, with the job's directory and the repository on the path, writing bytecode: an
    installed package has its modules compiled (pip compiles them), so a start that compiles every module
    from source (``PYTHONDONTWRITEBYTECODE``) would measure the compiler, not the start."""
    path = os.pathsep.join(p for p in (".", str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = dict(os.environ, PYTHONPATH=path)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def first_message_s(lines: int, extra: tuple[str, ...] = ()) -> tuple[float, str]:
    """Seconds from the launch to the first message of one run in a fresh directory (and its stderr)."""
    with tempfile.TemporaryDirectory(prefix="samza-cold-") as name:
        directory = Path(name)
        prepare(directory, lines)
        command = [sys.executable, *extra, "-m", "samza_nb", "run", "--config-path", "job.properties"]
        started = time.time()
        done = subprocess.run(
            [*command, "--no-progress"], cwd=directory, env=environment(), capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"samza-nb run failed ({done.returncode}):\n{done.stderr}")
        first = float((directory / "first.txt").read_text())
        written = [json.loads(line) for line in (directory / "counts.txt").read_text().splitlines() if line]
        counts = {item["word"]: item["count"] for item in written}
        same("the word count's output", counts, expected_counts(lines))
        return first - started, done.stderr


def interpreter_s() -> float:
    started = time.time()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=environment())
    return time.time() - started


def import_costs(lines: int, top: int = 12) -> list[tuple[str, float]]:
    """The packages whose import costs most in one run (cumulative ms of top-level imports)."""
    _, stderr = first_message_s(lines, ("-X", "importtime"))
    costs: dict[str, float] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line.split(":", 1)[1].split("|")
        if name.startswith("  "):
            continue  # only the imports made at the top (each counts what it pulled in)
        costs[name.strip()] = costs.get(name.strip(), 0.0) + int(cumulative) / 1000.0
    return sorted(costs.items(), key=lambda item: -item[1])[:top]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--lines", type=int, default=1000)
    args = parser.parse_args(argv)
    first_message_s(args.lines)  # warm the file cache and the bytecode cache
    runs, bare = [], []
    for _ in range(args.runs):
        bare.append(interpreter_s())
        runs.append(first_message_s(args.lines)[0])
    median, baseline = statistics.median(runs), statistics.median(bare)
    print(f"samza-nb run, launch to first message: median {median:.3f} s ({min(runs):.3f}-{max(runs):.3f})")
    ratio = median / baseline
    print(f"python -c pass: median {baseline:.3f} s; samza-nb run costs {ratio:.1f}x the bare start")
    print("imports at the top (cumulative ms, one run):")
    for name, ms in import_costs(args.lines):
        print(f"  {name:48} {ms:7.1f}")


if __name__ == "__main__":
    main()
