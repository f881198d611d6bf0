"""The notebook layer in a real Jupyter kernel (ipykernel): a background job on its own thread keeps the
notebook responsive and keeps processing while other cells run (a sleeping cell, a CPU-bound cell, an
interrupted cell); a waiting cell stops it on the kernel's interrupt or the dashboard's Stop button; and the
widgets follow the job.

Figures (new-cell latency while a job runs, the job's rate during a sleeping cell) are printed and written to
tests/notebook/artifacts/kernel_figures.json. What the dashboard costs a job is measured by
benchmarks/dashboard.py.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

pytestmark = pytest.mark.slow

ARTIFACTS = Path(__file__).parent / "artifacts"

SETUP = """
%load_ext samza_nb
from samza_nb.systems.inmemory.system import InMemoryBroker
broker = InMemoryBroker.named("kern")
"""

CONFIG = """%%samza_config
job.name = {job}
task.inputs = kern.{stream}
systems.kern.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory
systems.kern.samza.offset.default = oldest
"""


PASS_TASK = (
    "%%samza_task\nclass Pass:\n    def process(self, envelope, collector, coordinator):\n        pass\n"
)


def pass_job(kernel: Kernel, stream: str) -> None:
    """Job ``stream`` over ``kern.<stream>`` from the oldest offset, with a task that does nothing."""
    kernel.run(CONFIG.format(job=stream, stream=stream))
    kernel.run(PASS_TASK)


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
        "broker.create_stream('busy', 2)\nfor i in range(300_000): broker.send('busy', i, partition=i % 2)"
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
    assert 0 < processed < 300_000
    record("new_cell_latency_ms_idle_median", round(statistics.median(idle), 1))
    record("new_cell_latency_ms_busy_median", round(statistics.median(busy), 1))
    record("new_cell_latency_ms_busy_max", round(max(busy), 1))
    # Responsive: a cell waits for a slice of the job, not for the job (15 s of CPU work). The job's thread
    # holds the GIL a switch interval at a time, so a busy cell's latency is the idle latency plus a few
    # switch intervals. busy / idle alone swings with the machine (5.7-7.2 quiet, 1.1-4.5 loaded: idle
    # grows with load); busy / (idle + one switch interval) was 1.0-3.9 over 20 runs with the load average
    # at 10-21 on 2 cores: 10 leaves a margin of 2.5 at the worst seen.
    slice_ms = 1000 * kernel.value("__import__('sys').getswitchinterval()")
    ratio = statistics.median(busy) / (statistics.median(idle) + slice_ms)
    assert ratio < 10, (ratio, idle, busy)
    kernel.run("%samza_stop")
    kernel.run("await samza.wait(timeout=10)")
    assert kernel.value("str(samza.run.outcome)") == "stopped"


BUSY_TASK = (
    "%%samza_task\nimport time\nclass Busy:\n    def process(self, envelope, collector, coordinator):\n"
    "        started = time.perf_counter()\n"
    "        while time.perf_counter() - started < 50e-6:  # 50 us of CPU work per message\n"
    "            pass\n"
)

RATE_DURING = """
import asyncio
import time
p0, t0 = samza.run.job.status().processed, time.perf_counter()
{during}
rate = (samza.run.job.status().processed - p0) / (time.perf_counter() - t0)
print(round(rate))
"""


def test_the_job_keeps_its_rate_while_a_cell_sleeps_or_computes(kernel: Kernel) -> None:
    kernel.run("broker.create_stream('steady', 1)\nfor i in range(400_000): broker.send('steady', i)")
    kernel.run(CONFIG.format(job="steady", stream="steady"))
    kernel.run(BUSY_TASK)
    kernel.run("%samza_run --no-dashboard")
    kernel.run("assert await samza.until(lambda view: view.processed > 1000, timeout=20)")
    # The kernel idle (an awaiting cell yields its loop) and a cell blocking it (time.sleep), alternately
    # (3 s each in all: the machine's other load falls on both alike); then 0.6 s of CPU in a cell.
    idle = asleep = 0
    for _ in range(3):
        idle += int(kernel.run(RATE_DURING.format(during="await asyncio.sleep(1)"), timeout=30).stdout)
        asleep += int(kernel.run(RATE_DURING.format(during="time.sleep(1)"), timeout=30).stdout)
    busy = 3 * int(
        kernel.run(
            RATE_DURING.format(during="x = 0\nwhile time.perf_counter() - t0 < 0.6:\n    x += 1"), timeout=30
        ).stdout
    )
    assert kernel.value("samza.running"), "the input lasts longer than the measurements"
    kernel.run("%samza_stop")
    record("rate_idle_msg_s", idle // 3)
    record("rate_during_sleep_cell_ratio", round(asleep / idle, 2))
    record("rate_during_cpu_cell_ratio", round(busy / idle, 2))
    # A sleeping cell holds nothing the job needs: over 20 runs with the load average at 10-21 on 2 cores
    # the job kept 0.74-1.30 of its idle rate (the machine's load moves both; only a slowdown is a fault).
    assert asleep / idle >= 0.6, (idle, asleep)
    # A CPU-bound cell and the job share the GIL: over the same runs the job kept 0.37-1.08 of its idle
    # rate; a job starved by the cell would keep next to nothing.
    assert busy / idle >= 0.1, (idle, busy)


def test_interrupting_an_unrelated_cell_leaves_the_job_running(kernel: Kernel) -> None:
    kernel.run("broker.create_stream('live', 1)\nfor i in range(100): broker.send('live', i)")
    pass_job(kernel, "live")
    kernel.run("%samza_run")
    kernel.run("assert await samza.until(lambda view: view.processed == 100, timeout=10)")
    cell = kernel.start("import time\nprint('sleeping', flush=True)\ntime.sleep(60)")
    kernel.iopub_until(cell, lambda m: m["msg_type"] == "stream" and "sleeping" in m["content"]["text"])
    kernel.interrupt()
    assert kernel.reply(cell).error.startswith("KeyboardInterrupt")
    assert kernel.value("samza.running"), "the interrupt of another cell stopped the job"
    kernel.run("for i in range(100, 150): broker.send('live', i)")
    kernel.run("assert await samza.until(lambda view: view.processed == 150, timeout=10)")
    kernel.run("%samza_stop")
    assert kernel.value("str(samza.run.outcome)") == "stopped"
    report = kernel.run("report = %samza_checkpoints\nprint(report)").stdout
    assert "kern.live#0  149" in report


def _still_waiting(message: dict[str, object]) -> bool:
    content = message["content"]
    assert isinstance(content, dict)
    return message["msg_type"] == "stream" and "still waiting for job" in str(content.get("text", ""))


def _printed(text: str) -> Any:
    """A predicate on iopub messages: the run cell's output area (a display) shows ``text``."""

    def shows(message: dict[str, Any]) -> bool:
        kind, content = message["msg_type"], message["content"]
        shown = content["data"].get("text/plain", "") if "data" in content else ""
        return kind in ("display_data", "update_display_data") and text in shown

    return shows


def test_an_interrupt_stops_a_waiting_job_gracefully(kernel: Kernel) -> None:
    kernel.run("broker.create_stream('endless', 1)\nfor i in range(20): broker.send('endless', i)")
    pass_job(kernel, "endless")
    cell = kernel.start("%samza_run --wait --no-dashboard")
    seen = kernel.iopub_until(cell, _still_waiting)  # the input never ends: the cell says how to stop it
    note = seen[-1]["content"]["text"]
    assert "1 input partition of 1 not at end-of-stream" in note
    assert "interrupt the kernel (■) to stop it gracefully" in note  # no dashboard, so no Stop button
    kernel.interrupt()
    reply = kernel.reply(cell)
    assert reply.status == "ok", reply.error
    assert "job 'endless' interrupted: 20 messages" in reply.stdout
    assert kernel.value("str(samza.run.outcome)") == "interrupted"
    assert "kern.endless#0  19" in kernel.run("report = %samza_checkpoints\nprint(report)").stdout


def test_two_quick_interrupts_cancel_a_waiting_job_that_cannot_stop(kernel: Kernel) -> None:
    """The first interrupt asks for a graceful stop, which a task stuck in an await never allows; the
    second, before the wait said anything, cancels the job, and the cell returns."""
    kernel.run("broker.create_stream('stuck', 1)\nbroker.send('stuck', 0)")
    kernel.run(CONFIG.format(job="stuck", stream="stuck"))
    kernel.run(
        "%%samza_task\nimport asyncio\nclass Stuck:\n"
        "    async def process(self, envelope, collector, coordinator):\n"
        "        print('holding', flush=True)\n"
        "        await asyncio.sleep(3600)\n"
    )
    cell = kernel.start("%samza_run --wait --no-dashboard")
    kernel.iopub_until(cell, _printed("holding"))  # what the task printed, in the cell's output area
    kernel.interrupt()
    kernel.iopub_until(
        cell, lambda m: m["msg_type"] == "stream" and "interrupt again" in m["content"]["text"]
    )
    kernel.interrupt()
    reply = kernel.reply(cell, timeout=30)
    assert "cancelling job 'stuck'" in reply.stdout
    assert "still waiting" not in reply.stdout  # it was told to stop before the note was due
    assert kernel.value("str(samza.run.outcome)") == "cancelled"
    assert not kernel.value("samza.running")


def test_the_stop_button_stops_a_waiting_job(kernel: Kernel) -> None:
    kernel.run("broker.create_stream('button', 1)\nfor i in range(20): broker.send('button', i)")
    pass_job(kernel, "button")
    cell = kernel.start("%samza_run --wait")
    seen = kernel.iopub_until(cell, _still_waiting)
    assert "interrupt the kernel (■) or press Stop" in seen[-1]["content"]["text"]
    buttons = {
        m["content"]["data"]["state"].get("description"): m["content"]["comm_id"]
        for m in seen
        if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == "ButtonModel"
    }
    assert sorted(buttons) == ["Pause", "Resume", "Step", "Stop"], "the dashboard's Stop and steering buttons"
    # What the browser sends on a click; the cell is still running (awaiting), and handles it.
    kernel.comm_msg(buttons["Stop"], {"method": "custom", "content": {"event": "click"}})
    reply = kernel.reply(cell)
    assert reply.status == "ok", reply.error
    assert "job 'button' stopped: 20 messages" in reply.stdout
    assert kernel.value("str(samza.run.outcome)") == "stopped"
    # The live widgets gave way to a static snapshot (a saved notebook shows it, not "model not found"): an
    # update of the dashboard's display, sent before the cell ended (its parent may be the click).
    (dashboard,) = [
        m["content"]["transient"]["display_id"]
        for m in seen
        if m["msg_type"] == "display_data"
        and m["content"].get("transient", {}).get("display_id")
        and "application/vnd.jupyter.widget-view+json" in m["content"]["data"]
    ]
    updates = [m for m in kernel.display_updates if m["content"]["transient"]["display_id"] == dashboard]
    assert updates and "samza-snapshot" in updates[-1]["content"]["data"]["text/html"]


def test_wait_blocks_the_cell_and_updates_the_widgets(kernel: Kernel) -> None:
    kernel.run(
        "broker.create_stream('bounded', 2)\nfor i in range(1000): broker.send('bounded', i, partition=i % 2)"
    )
    kernel.run("broker.end_stream('bounded')")
    pass_job(kernel, "bounded")
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
    detail = "<span class='samza-task-detail'>0/1 in flight · 500 processed · peak 1/1 · done</span>"
    assert detail in kernel.value("samza.dashboard.body.value")


def test_checkpoints_reset_starts_a_job_with_a_store_over(kernel: Kernel) -> None:
    """The checkpoints of a job with a store live in its state file too: a reset drops them with the store,
    says so in one line, and the next run processes every message again from empty state."""
    kernel.run("broker.create_stream('tally', 1)\nfor i in range(20): broker.send('tally', i % 4)\n"
               "broker.end_stream('tally')")  # fmt: skip
    kernel.run(
        CONFIG.format(job="tally", stream="tally")
        + "stores.counts.factory = samza_nb.storage.duckdb.DuckDBStoreFactory\n"
        "stores.counts.key.serde = string\nstores.counts.msg.serde = int\n"
    )
    kernel.run(
        "%%samza_task\nclass Tally:\n    def init(self, context):\n"
        "        self.counts = context.get_store('counts')\n"
        "    def process(self, envelope, collector, coordinator):\n"
        "        key = str(envelope.message)\n"
        "        self.counts.put(key, (self.counts.get(key) or 0) + 1)\n"
    )
    kernel.run("%samza_run --wait --no-dashboard")
    assert kernel.value("samza.run.view.processed") == 20
    lines = kernel.run("%samza_checkpoints --reset").stdout.strip().splitlines()
    assert len(lines) == 1 and "reset" in lines[0] and "state files of 1 partition" in lines[0], lines
    kernel.run("%samza_run --wait --no-dashboard --timeout 20")
    assert kernel.value("samza.run.view.processed") == 20, "the reset job processes every message again"
    assert kernel.value("str(samza.run.outcome)") == "finished"
