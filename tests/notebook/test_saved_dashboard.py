"""What a saved notebook keeps of a dashboard, in a real kernel: notebooks executed by nbclient (as
``jupyter nbconvert --execute`` and nbval do; its kernel shuts down when the last cell is done) and a kernel
driven over its protocol.

- A job still running when the kernel shuts down leaves an HTML snapshot beside its widget, showing the
  messages processed so far and saying the live view needs the kernel that ran it.
- A finished job's dashboard becomes a static snapshot that keeps its chart as a picture (inline SVG) and
  its true average rate (processed / elapsed), however short the job.
- When the kernel exits while a job runs, a last snapshot says so and the widgets close (a front-end still
  open shows the snapshot, not a dashboard frozen at "running").
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")
require("nbclient", "executing notebooks needs nbclient (samza_nb[dev])")

pytestmark = pytest.mark.slow

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def _setup(stream: str, messages: int, work_us: int) -> list[str]:
    """Cells that fill ``saved.<stream>`` and define a job over it whose task spends ``work_us`` of CPU
    on each message."""
    return [
        "%load_ext samza_nb\nfrom samza_nb.systems.inmemory.system import InMemoryBroker\n"
        f"broker = InMemoryBroker.named('saved')\nbroker.create_stream('{stream}', 1)\n"
        f"for i in range({messages}): broker.send('{stream}', i)",
        f"%%samza_config\njob.name = {stream}\ntask.inputs = saved.{stream}\n"
        "systems.saved.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory\n"
        "systems.saved.samza.offset.default = oldest",
        "%%samza_task\nimport time\nclass Work:\n    def process(self, envelope, collector, coordinator):\n"
        "        started = time.perf_counter()\n"
        f"        while time.perf_counter() - started < {work_us}e-6:\n            pass",
    ]


def _execute(cells: list[str]) -> Any:
    """The notebook of ``cells``, executed by nbclient in a python3 kernel (shut down at the end)."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    NotebookClient(notebook, timeout=120, kernel_name="python3").execute()
    return notebook


def _processed(html: str) -> int:
    (count,) = re.findall(r"<span class='samza-processed'><b>([\d,]+)</b> processed</span>", html)
    return int(count.replace(",", ""))


def test_a_job_running_when_the_kernel_shuts_down_leaves_a_snapshot_of_its_progress() -> None:
    notebook = _execute(
        [
            *_setup("endless", 200_000, 200),  # 40 s of work: still running when the notebook ends
            "%samza_run",
            # Wait until the snapshot beside the widget was sent again with messages processed.
            "import asyncio\noutput = samza.dashboard.output\n"
            "while not (output.refreshes and output.shown_processed):\n    await asyncio.sleep(0.05)\n"
            "print('running' if samza.running else 'ended')",
        ]
    )
    assert notebook.cells[-1].outputs[0]["text"] == "running\n"
    # The run cell shows the widget, its snapshot and (below them) the job's output area.
    outputs = notebook.cells[3].outputs
    (widget,) = [o for o in outputs if WIDGET_VIEW in o.get("data", {})]
    (snapshot,) = [o for o in outputs if "samza-snapshot" in o.get("data", {}).get("text/html", "")]
    assert "text/html" not in widget["data"]
    html = snapshot["data"]["text/html"]
    assert "samza-snapshot" in html and ">running</span>" in html
    assert 0 < _processed(html) < 200_000
    assert re.search(r"snapshot at \d\d:\d\d:\d\d; the live view needs the kernel that ran it", html)
    assert "<style>" in html  # hides it while the live widget shows (JupyterLab), hides the widget's error
    assert snapshot["data"]["text/plain"].startswith("(snapshot at ")


def test_a_finished_job_keeps_its_chart_as_a_picture_and_its_average_rate() -> None:
    notebook = _execute([*_setup("bounded", 10_000, 50), "broker.end_stream('bounded')", "%samza_run --wait"])
    widget, snapshot = notebook.cells[-1].outputs[:2]
    final = widget["data"]["text/html"]  # the widget's output became the final snapshot
    assert WIDGET_VIEW not in widget["data"]
    assert ">finished</span>" in final and _processed(final) == 10_000
    assert snapshot["data"]["text/html"] == ""  # the live snapshot gave way to it
    picture = re.search(r"<svg class='samza-chart-picture'.*?</svg>", final)
    assert picture is not None and "<polyline" in picture.group(0)
    (average,) = re.findall(r"<span class='samza-average-rate'>average ([\d,]+) msg/s</span>", final)
    assert int(average.replace(",", "")) > 0
    (header_average,) = re.findall(r"avg ([\d,]+) msg/s", final)
    assert int(header_average.replace(",", "")) > 0


def test_a_kernel_exiting_while_a_job_runs_says_so_and_closes_the_widgets() -> None:
    kernel = Kernel()
    try:
        for cell in _setup("exiting", 200_000, 200):
            kernel.run(cell)
        start = kernel.run("%samza_run")
        (snapshot_id,) = [
            m["content"]["transient"]["display_id"]
            for m in start.of_type("display_data")
            if m["content"]["data"].get("text/html")  # (the job's output area starts empty)
        ]
        kernel.run("assert await samza.until(lambda view: view.processed > 0, timeout=20)")
        kernel.client.shutdown()  # what a front-end's restart or shut down sends
        updates, closed = [], 0
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and kernel.manager.is_alive():
            try:
                message = kernel.client.get_iopub_msg(timeout=0.5)
            except Exception:  # queue.Empty: the kernel is still exiting
                continue
            if message["msg_type"] == "update_display_data":
                if message["content"]["transient"]["display_id"] == snapshot_id:
                    updates.append(message["content"]["data"])
            elif message["msg_type"] == "comm_close":
                closed += 1
        assert updates, "no last snapshot before the kernel exited"
        last = updates[-1]["text/html"]
        assert re.search(r"the kernel stopped at \d\d:\d\d:\d\d while the job ran", last)
        assert _processed(last) > 0
        assert closed, "the widgets were not closed"
    finally:
        kernel.close()
