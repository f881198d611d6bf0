"""Dashboard cost: a pass-through job in a real Jupyter kernel, with the monitor and the live dashboard, as
a ratio to a bare container (no observer) in the same kernel.

Measured two ways in one run:

1. the share of the job's loop time spent in the monitor and the dashboard (timer ticks with their
   renders, bus events), timed directly: robust to a noisy machine;
2. throughput of each variant as a ratio to the bare container, interleaved round by round, median of the
   per-round ratios; per CPU second of the whole kernel process (every thread, so the IOPub thread sending
   widget updates counts) and per wall second. The spread of the bare runs (median absolute deviation)
   says whether the machine was quiet enough to resolve a 10% effect.

Run: ``python benchmarks/dashboard.py [--messages N] [--rounds R]``; needs the notebook extra
(ipykernel, ipywidgets). Prints medians of R rounds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parents[1])
sys.path.insert(0, ROOT)
# The kernel is a child process: it imports samza_nb from this checkout too.
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, os.environ.get("PYTHONPATH")) if p)
os.environ.setdefault("JUPYTER_PLATFORM_DIRS", "1")

from tests.notebook.kernel import Kernel  # noqa: E402 (after the path and environment are set)

SETUP = """
%load_ext samza_nb
from samza_nb.systems.inmemory.system import InMemoryBroker
broker = InMemoryBroker.named("bench")
"""

CONFIG = """%%samza_config
job.name = bench
task.inputs = bench.bench
systems.bench.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory
systems.bench.samza.offset.default = oldest
"""

PASS = "%%samza_task\nclass Pass:\n    def process(self, envelope, collector, coordinator):\n        pass\n"

BARE = (
    "container = SamzaContainer(Config(samza.config), Pass, planner=plan_job_model,\n"
    "                           checkpoint_manager=InMemoryCheckpointManager())\n"
    "gc.collect()\nt0, c0 = time.perf_counter(), time.process_time()\nawait container.run()\n"
    "wall, cpu = time.perf_counter() - t0, time.process_time() - c0\n"
    "assert container.processed == {n}, f'processed {{container.processed}} of {n} messages'\n"
    "rates = (container.processed / cpu, container.processed / wall, 0.0)"
)

MAGIC = (
    "%samza_checkpoints --reset\ngc.collect()\nspent.clear()\n%samza_run {flags}\n{wait}"
    "assert samza.view.processed == {n}, f'processed {{samza.view.processed}} of {n} messages'\n"
    "rates = (samza.view.processed / samza.run.run_cpu_seconds,\n"
    "         samza.view.processed / samza.run.run_seconds, sum(spent) / samza.run.run_seconds)"
)

# Times every call the monitor and the dashboard get on the job's loop (timer ticks with their renders,
# bus events): the share of the loop they take, measured directly.
INSTRUMENT = """
import functools
from samza_nb.notebook.display.monitor import Monitor
spent = []
def timed(method):
    @functools.wraps(method)
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)
    return wrapper
for name in ("_tick", "_on_event", "_on_decision"):
    setattr(Monitor, name, timed(getattr(Monitor, name)))
"""

OBSERVED = ("monitor_only", "dashboard", "dashboard_wait_thread")


def measure(kernel: Kernel, messages: int, rounds: int) -> dict[str, dict[str, list[float]]]:
    """Per variant, per measure ("cpu", "wall", "share"): one figure per round."""
    kernel.run(SETUP)
    kernel.run(
        f"broker.create_stream('bench', 4)\n"
        f"for i in range({messages}): broker.send('bench', i, partition=i % 4)"
    )
    # The messages stay alive through every run: freeze them out of the garbage collector's reach, or a
    # full collection lands in whichever run happens to trigger it.
    kernel.run("broker.end_stream('bench')\nimport gc\ngc.collect()\ngc.freeze()")
    kernel.run(CONFIG)
    kernel.run(
        "%%samza_task\nclass Pass:\n    def process(self, envelope, collector, coordinator):\n        pass\n"
    )
    kernel.run(
        "import time\n"
        "from samza_nb.config import Config\n"
        "from samza_nb.container.container import SamzaContainer\n"
        "from samza_nb.coordinator.planning import plan_job_model\n"
        "from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager\n" + INSTRUMENT
    )
    variants = {
        "bare": BARE.format(n=messages),
        "monitor_only": MAGIC.format(flags="--no-dashboard", wait="await samza.wait()\n", n=messages),
        "dashboard": MAGIC.format(flags="", wait="await samza.wait()\n", n=messages),
        "dashboard_wait_thread": MAGIC.format(flags="--wait", wait="", n=messages),
    }
    figures: dict[str, dict[str, list[float]]] = {
        name: {"cpu": [], "wall": [], "share": []} for name in variants
    }
    for _ in range(rounds):
        for name, code in variants.items():
            kernel.run(code, timeout=600)
            per_cpu, per_wall, loop_share = kernel.value("rates")
            figures[name]["cpu"].append(per_cpu)
            figures[name]["wall"].append(per_wall)
            figures[name]["share"].append(loop_share)
    kernel.run("del container\ngc.unfreeze()")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    kernel = Kernel()
    try:
        figures = measure(kernel, args.messages, args.rounds)
    finally:
        kernel.close()
    bare = figures["bare"]["cpu"]
    spread = statistics.median(abs(rate - statistics.median(bare)) for rate in bare) / statistics.median(bare)
    print(f"medians of {args.rounds} rounds, {args.messages:,} in-memory messages over 4 partitions")
    print(
        f"{'bare container':24} {statistics.median(bare):12,.0f} msgs/cpu-s "
        f"{statistics.median(figures['bare']['wall']):12,.0f} msgs/s  (spread {spread:.1%})"
    )
    for name in OBSERVED:
        ratios = {
            measure: statistics.median(
                r / b for r, b in zip(figures[name][measure], figures["bare"][measure], strict=True)
            )
            for measure in ("cpu", "wall")
        }
        share = statistics.median(figures[name]["share"])
        print(
            f"{name:24} ratio per cpu-s {ratios['cpu']:.3f}  per wall-s {ratios['wall']:.3f}  "
            f"loop share {share:.2%}"
        )
    if spread > 0.1:
        print(f"bare runs spread {spread:.0%}: too noisy here to resolve a 10% effect")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
