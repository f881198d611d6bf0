"""The notebook layer in a real Jupyter kernel (ipykernel): a background job on the kernel's own loop keeps
the notebook responsive, the kernel's interrupt stops it cleanly, and the dashboard costs little.

Figures (new-cell latency while a job runs, throughput ratios) are printed and written to
tests/notebook/artifacts/kernel_figures.json.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).parent / "artifacts"

SETUP = """
%load_ext samza_nb
from samza_nb.systems.inmemory import InMemoryBroker
broker = InMemoryBroker.named("kern")
"""

CONFIG = """%%samza_config
job.name = {job}
task.inputs = kern.{stream}
systems.kern.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory
systems.kern.samza.offset.default = oldest
"""


def record(name: str, value: object) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / "kernel_figures.json"
    figures = json.loads(path.read_text()) if path.exists() else {}
    figures[name] = value
    path.write_text(json.dumps(figures, indent=2, sort_keys=True))
    print(f"{name}: {value}")


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    k.run(SETUP)
    yield k
    k.close()


def test_a_mistake_is_a_one_line_error_output(kernel: Kernel) -> None:
    """The cell fails (Jupyter stops "Run all", nbval fails the cell) and shows one line, no traceback."""
    reply = kernel.run("%%samza_sql counts\nSELECT 1", check=False)
    assert reply.status == "error"
    (error,) = reply.of_type("error")
    assert error["content"]["ename"] == "NotebookError"
    assert error["content"]["traceback"] == [
        "NotebookError: samza_sql: no job has run yet: %samza_run the job, then query its stores"
    ]


def test_a_background_job_leaves_the_notebook_responsive(kernel: Kernel) -> None:
    kernel.run(
        "broker.create_stream('busy', 2)\nfor i in range(60_000): broker.send('busy', i, partition=i % 2)"
    )
    kernel.run(CONFIG.format(job="busy", stream="busy"))
    kernel.run(
        "%%samza_task\nimport time\nclass Busy:\n    def process(self, envelope, collector, coordinator):\n"
        "        started = time.perf_counter()\n"
        "        while time.perf_counter() - started < 50e-6:  # 50 us of CPU work per message\n"
        "            pass\n"
    )
    idle = [kernel.run("1").elapsed_ms for _ in range(20)]
    start = kernel.run("%samza_run")
    assert start.status == "ok"
    assert start.of_type("display_data"), "the dashboard is displayed"
    busy = [kernel.run("1").elapsed_ms for _ in range(20)]
    processed = kernel.value("samza.view.processed")
    assert kernel.value("samza.running"), "the job was still busy while the cells ran"
    assert 0 < processed < 60_000
    record("new_cell_latency_ms_idle_median", round(statistics.median(idle), 1))
    record("new_cell_latency_ms_busy_median", round(statistics.median(busy), 1))
    record("new_cell_latency_ms_busy_max", round(max(busy), 1))
    assert statistics.median(busy) < 100
    kernel.run("%samza_stop")
    kernel.run("await samza.wait(timeout=10)")
    assert kernel.value("samza.run.outcome") == "stopped"


def test_the_kernel_interrupt_stops_a_background_job_gracefully(kernel: Kernel) -> None:
    kernel.run("broker.create_stream('live', 1)\nfor i in range(100): broker.send('live', i)")
    kernel.run(CONFIG.format(job="live", stream="live"))
    kernel.run(
        "%%samza_task\nclass Pass:\n    def process(self, envelope, collector, coordinator):\n        pass\n"
    )
    kernel.run("%samza_run")
    kernel.run("assert await samza.until(lambda view: view.processed == 100, timeout=10)")
    time.sleep(0.6)  # idle: the interrupt route is installed within a quarter second
    kernel.interrupt()
    deadline = time.monotonic() + 10
    while kernel.value("samza.running"):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert kernel.value("samza.run.outcome") == "interrupted"
    report = kernel.run("report = %samza_checkpoints\nprint(report)").stdout
    assert "kern.live#0  99" in report
    # Idle again, the kernel ignores interrupts as before (no KeyboardInterrupt inside its loop).
    kernel.interrupt()
    time.sleep(0.3)
    assert kernel.run("print('alive')").stdout == "alive\n"


def test_wait_blocks_the_cell_and_updates_the_widgets(kernel: Kernel) -> None:
    kernel.run(
        "broker.create_stream('bounded', 2)\nfor i in range(1000): broker.send('bounded', i, partition=i % 2)"
    )
    kernel.run("broker.end_stream('bounded')")
    kernel.run(CONFIG.format(job="bounded", stream="bounded"))
    kernel.run(
        "%%samza_task\nclass Pass:\n    def process(self, envelope, collector, coordinator):\n        pass\n"
    )
    reply = kernel.run("%samza_run --wait --timeout 30")
    assert "job 'bounded' finished: 1,000 messages" in reply.stdout
    assert "every input reached end-of-stream" in reply.stdout
    assert reply.of_type("comm_open"), "the dashboard's widgets were opened"
    values = [
        str(m["content"]["data"]["state"].get("value"))
        for m in reply.of_type("comm_msg")
        if m["content"]["data"].get("method") == "update"
    ]
    assert any("<span class='samza-processed'><b>1,000</b> processed</span>" in value for value in values)
    assert "<span class='samza-task-detail'>0/1 in flight · 500 processed · done</span>" in kernel.value(
        "samza.dashboard.body.value"
    )


BARE = (
    "container = SamzaContainer(Config(samza.config), Pass,\n"
    "                           checkpoint_manager=InMemoryCheckpointManager())\n"
    "gc.collect()\nt0, c0 = time.perf_counter(), time.process_time()\nawait container.run()\n"
    "wall, cpu = time.perf_counter() - t0, time.process_time() - c0\n"
    "rates = (container.processed / cpu, container.processed / wall, 0.0)"
)

MAGIC = (
    "%samza_checkpoints --reset\ngc.collect()\nspent.clear()\n%samza_run {flags}\n{wait}"
    "assert samza.view.processed == {n}\n"
    "rates = (samza.view.processed / samza.run.run_cpu_seconds,\n"
    "         samza.view.processed / samza.run.run_seconds, sum(spent) / samza.run.run_seconds)"
)

# Times every call the monitor and the dashboard get on the job's loop (timer ticks with their renders,
# bus events): the share of the loop they take, measured directly.
INSTRUMENT = """
import functools
from samza_nb.notebook.monitor import Monitor
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


def test_dashboard_throughput_cost_on_a_pass_through_job(kernel: Kernel) -> None:
    """What the dashboard costs a pass-through job in the kernel, measured two ways in one run.

    1. The share of the job's loop time spent in the monitor and the dashboard (timer ticks with their
       renders, bus events), timed directly: robust to a noisy machine. Must stay under 5%.
    2. Throughput, each variant as a ratio to a bare container (no observer) in the same kernel,
       interleaved, median of per-round ratios; per CPU second of the whole kernel process (every
       thread, so the IOPub thread sending widget updates counts) and per wall second. Asserted (>= 0.9)
       only when the bare runs agree within 10% (median absolute deviation); on a machine too busy to
       resolve a 10% effect the figures are recorded but not asserted.

    The job reads 1,000,000 in-memory messages (about 200 MB), so that a run's start and end weigh
    little against its steady state."""
    n = 1_000_000
    kernel.run(
        f"broker.create_stream('bench', 4)\nfor i in range({n}): broker.send('bench', i, partition=i % 4)"
    )
    # The million messages stay alive through every run: freeze them out of the garbage collector's
    # reach, or a full collection (~0.1 s here) lands in whichever run happens to trigger it.
    kernel.run("broker.end_stream('bench')\nimport gc\ngc.collect()\ngc.freeze()")
    kernel.run(CONFIG.format(job="bench", stream="bench"))
    kernel.run(
        "%%samza_task\nclass Pass:\n    def process(self, envelope, collector, coordinator):\n        pass\n"
    )
    kernel.run(
        "import time\n"
        "from samza_nb.config import Config\n"
        "from samza_nb.container.container import SamzaContainer\n"
        "from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager\n" + INSTRUMENT
    )
    variants = {
        "bare": BARE,
        "monitor_only": MAGIC.format(flags="--no-dashboard", wait="await samza.wait()\n", n=n),
        "dashboard": MAGIC.format(flags="", wait="await samza.wait()\n", n=n),
        "dashboard_wait_thread": MAGIC.format(flags="--wait", wait="", n=n),
    }
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    wall: dict[str, list[float]] = {name: [] for name in variants}
    share: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(7):
        for name, code in variants.items():
            kernel.run(code, timeout=120)
            per_cpu, per_wall, loop_share = kernel.value("rates")
            cpu[name].append(per_cpu)
            wall[name].append(per_wall)
            share[name].append(loop_share)
    kernel.run("del container\ngc.unfreeze()")
    for name in ("monitor_only", "dashboard"):
        record(f"loop_share_{name}", round(statistics.median(share[name]), 4))
    assert statistics.median(share["dashboard"]) < 0.05, "the dashboard takes more than 5% of the job's loop"
    bare = cpu["bare"]
    spread = statistics.median(abs(rate - statistics.median(bare)) for rate in bare) / statistics.median(bare)
    record("pass_through_bare_msgs_per_cpu_s", round(statistics.median(bare)))
    record("pass_through_bare_msgs_per_wall_s", round(statistics.median(wall["bare"])))
    record("bare_rate_spread", round(spread, 3))
    ratios = {}
    for measure, table in (("cpu", cpu), ("wall", wall)):
        for name in ("monitor_only", "dashboard", "dashboard_wait_thread"):
            ratio = statistics.median(r / b for r, b in zip(table[name], table["bare"], strict=True))
            ratios[(measure, name)] = ratio
            record(f"throughput_ratio_{measure}_{name}_vs_bare", round(ratio, 3))
    if spread <= 0.1:
        assert ratios[("cpu", "dashboard")] >= 0.9, "the dashboard costs more than 10% of the throughput"
    else:
        print(f"bare runs spread {spread:.0%}: too noisy here to assert a 10% effect; figures recorded")
