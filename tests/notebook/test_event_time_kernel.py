"""Event time you can see, in a real Jupyter kernel: the idle-partition case (a partition stops sending and
holds back the watermark of a ``partition_by``'s consumers). ``%samza_time`` and the dashboard's event
time section name the stalled partition in the first view where it falls behind; when it sends again, the
windows it held fire and it is no longer named."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

pytestmark = pytest.mark.slow

SETUP = """
%load_ext samza_nb
import asyncio
from samza_nb.control import WatermarkMessage
from samza_nb.systems.inmemory.system import InMemoryBroker

InMemoryBroker.drop("idle-kernel")
broker = InMemoryBroker.named("idle-kernel", "idle")
broker.create_stream("clicks", 2)
clock = {0: 0, 1: 0}

def send(partition, clicks):
    # clicks 100 ms of event time apart, then a source watermark: nothing older follows
    for i in range(clicks):
        clock[partition] += 100
        broker.send("clicks", {"user": "abc"[i % 3]}, partition=partition, timestamp=clock[partition])
    broker.send("clicks", WatermarkMessage(timestamp=clock[partition]), partition=partition)
"""

CONFIG = """%%samza_config
job.name = idle
systems.idle.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory
systems.idle.inmemory.namespace = idle-kernel
systems.idle.samza.offset.default = oldest
job.default.system = idle
"""

APP = """%%samza_app
from samza_nb.operators import StreamApplication, Windows

class PerUser(StreamApplication):
    def describe(self, app):
        (app.get_input_stream("clicks")
            .partition_by(lambda click: click["user"], None, "by-user")
            .window(Windows.tumbling(1000, init=lambda: 0, fold=lambda kv, n: n + 1,
                                     key_fn=lambda kv: kv.key), "per-second")
            .send_to(app.get_output_stream("counts")))
"""

SOURCE_WATERMARKS = """
def source_marks(view):
    # {partition: watermark} of the clicks stream in this view (None before the first event-time view)
    if view.time is None:
        return None
    return {p.ssp.partition: p.watermark for p in view.time.partitions if p.ssp.stream == "clicks"}
"""


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    k.run(SETUP)
    k.run(SOURCE_WATERMARKS)
    yield k
    k.close()


def test_the_stalled_partition_is_named_in_the_first_view_where_it_holds_back_the_watermark(
    kernel: Kernel,
) -> None:
    kernel.run("send(0, 10); send(1, 10)")  # both partitions at 1,000 ms
    kernel.run(CONFIG)
    kernel.run(APP)
    kernel.run("%samza_run")  # in the background, with its live dashboard
    try:
        kernel.run("VIEWS = []\nsamza.run.monitor.listeners.append(VIEWS.append)")
        both = "lambda v: source_marks(v) == {0: 1000, 1: 1000} and v.time.holding_back == ()"
        assert kernel.value(f"await samza.until({both}, timeout=30)") is True

        # Partition 0 goes on to 4,000 ms; partition 1 sends nothing more.
        kernel.run("send(0, 30)")
        ahead = "lambda v: (source_marks(v) or {}).get(0) == 4000"
        assert kernel.value(f"await samza.until({ahead}, timeout=30)") is True
        report = kernel.run("report = %samza_time\nprint(report)").stdout
        named = "idle.clicks#1 (task Partition 1) holds back the watermark at 1,000 ms: 3,000 ms behind"
        assert named in report, report
        assert "waits on idle.clicks#1" in report, report  # the open windows say what they wait for
        # Every view since partition 0 went ahead names partition 1, the first one included: within one
        # refresh of the job's monitor.
        behind = kernel.value(
            "[list(v.time.holding_back) for v in VIEWS if (source_marks(v) or {}).get(0, -1) > 1000]"
        )
        assert behind, "no view with partition 0 ahead"
        assert all(len(lines) == 1 and lines[0].startswith("idle.clicks#1 ") for lines in behind), behind
        # The dashboard's event time section says it too.
        shown = "lambda v: 'holds back the watermark' in samza.dashboard.body.value"
        assert kernel.value(f"await samza.until({shown}, timeout=10)") is True
        body = kernel.value("samza.dashboard.body.value")
        assert "samza-time-holding" in body and "idle.clicks#1 (task Partition 1) holds back" in body

        # Partition 1 catches up: the windows it held fire, and nothing holds the watermark back.
        kernel.run("send(1, 30)")
        caught_up = "lambda v: source_marks(v) == {0: 4000, 1: 4000}"
        assert kernel.value(f"await samza.until({caught_up}, timeout=30)") is True
        assert kernel.value("samza.view.time.holding_back") == ()
        fired = kernel.value("[o.fired for o in samza.view.time.operators if o.op_id == 'per-second']")
        assert sum(fired) >= 9, fired  # the panes of seconds 1 to 3 for three users
    finally:
        kernel.run("%samza_stop")


def test_samza_time_refuses_a_task_job_in_one_line(kernel: Kernel) -> None:
    kernel.run("broker.create_stream('plain', 1)\nbroker.send('plain', 1)\nbroker.end_stream('plain')")
    kernel.run(CONFIG.replace("job.name = idle", "job.name = plain\ntask.inputs = idle.plain"))
    kernel.run(
        "%%samza_task\nclass Plain:\n    def process(self, envelope, collector, coordinator):\n        pass"
    )
    kernel.run("%samza_run --wait --no-dashboard")
    reply = kernel.run("%samza_time plain", check=False)
    assert reply.status == "error"
    assert "runs a task, not an application" in reply.error, reply.error
