"""A notebook executed as Jupyter's "Run All" executes it (nbclient, in a real kernel): every output lands in
the cell it belongs to. A failure under ``--wait`` is told once, by its cell; a task's prints go to the cell
that started the job (a display updated by its id), never into a cell that runs meanwhile; a background
failure is told once, by the job's dashboard; ``%tb`` shows the task's own frames only."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.requirements import require

require("nbclient", "Run All needs nbclient (samza_nb[notebook])")
require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("ipywidgets", "the dashboard needs ipywidgets (samza_nb[notebook])")

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

pytestmark = pytest.mark.slow

SETUP = """%load_ext samza_nb
from samza_nb.systems.inmemory.system import InMemoryBroker
broker = InMemoryBroker.named("runall")
broker.create_stream("numbers", 2)
for i in range(20):
    broker.send("numbers", i, partition=i % 2)
broker.end_stream("numbers")
broker.create_stream("talk", 1)
broker.create_stream("late", 1)"""

CONFIG = """%%samza_config
job.name = {job}
task.inputs = runall.{stream}
systems.runall.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory
systems.runall.samza.offset.default = oldest"""

FAILING = """%%samza_task
class Boom(StreamTask):
    def process(self, envelope, collector, coordinator):
        print("saw", envelope.message)
        if envelope.message == 6:
            raise ValueError("six is right out")"""

CHATTY = """%%samza_task
import sys

class Chatty(StreamTask):
    def process(self, envelope, collector, coordinator):
        print("heard", envelope.message)
        print("complained", envelope.message, file=sys.stderr)"""


def text_of(outputs: list[Any]) -> str:
    """Everything a cell's outputs show, as one string (stream text, error lines, display bundles)."""
    return json.dumps([dict(output) for output in outputs])


def execute(cells: list[str]) -> list[Any]:
    """Run ``cells`` as Run All does (errors recorded, the next cell runs); each cell's outputs."""
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    NotebookClient(notebook, timeout=120, kernel_name="python3", allow_errors=True).execute()
    return [cell.outputs for cell in notebook.cells]


@pytest.fixture(scope="module")
def outputs() -> Iterator[list[Any]]:
    cells = [
        SETUP,  # 0
        CONFIG.format(job="fails", stream="numbers"),  # 1
        FAILING,  # 2
        "%samza_run --wait",  # 3
        "1 + 1",  # 4
        "%tb",  # 5
        CONFIG.format(job="chatty", stream="talk"),  # 6
        CHATTY,  # 7
        "%samza_run",  # 8
        "for i in range(5):\n    broker.send('talk', i)\n"
        "assert await samza.until(lambda v: v.processed == 5)",  # 9
        "%samza_stop",  # 10
        CONFIG.format(job="later", stream="late"),  # 11
        FAILING,  # 12
        "%samza_run",  # 13
        "for i in (5, 6):\n    broker.send('late', i)\nstatus = await samza.wait(timeout=30)",  # 14
        "2 + 2",  # 15
    ]
    yield execute(cells)


def test_a_failure_under_wait_is_told_once_by_its_cell(outputs: list[Any]) -> None:
    run = outputs[3]
    errors = [o for o in run if o["output_type"] == "error"]
    assert len(errors) == 1 and errors[0]["ename"] == "NotebookError"
    assert "line 6 of the %%samza_task cell" in errors[0]["evalue"]
    # The dashboard's snapshot says "failed" without the error again; the cell's error line says why.
    assert [o for o in run if "six is right out" in text_of([o])] == errors, text_of(run)
    assert "six is right out" not in text_of(outputs[4]) and outputs[4][0]["data"]["text/plain"] == "2"


def test_only_the_task_that_raised_is_labelled_failed(outputs: list[Any]) -> None:
    (snapshot,) = [o for o in outputs[3] if "samza-snapshot" in o.get("data", {}).get("text/html", "")]
    html = snapshot["data"]["text/html"]
    assert "3 processed · peak 1/1 · failed" in html  # Partition 0 raised at its fourth message
    assert "3 processed · peak 1/1 · stopped" in html  # Partition 1 was stopped with the job


def test_tb_shows_the_task_cell_not_the_container(outputs: list[Any]) -> None:
    (error,) = [o for o in outputs[5] if o["output_type"] == "error"]
    assert error["ename"] == "ValueError" and error["evalue"] == "six is right out"
    traceback = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))  # no colours
    assert 'raise ValueError("six is right out")' in traceback
    assert "<samza_nb" not in traceback and "round of" not in traceback and "samza_nb/" not in traceback


def test_prints_go_to_the_cell_that_started_the_job(outputs: list[Any]) -> None:
    waited = text_of(outputs[3])
    assert all(f"saw {n}" in waited for n in (0, 1, 6)), waited
    started = text_of(outputs[8])
    assert all(f"heard {n}" in started for n in range(5)), started
    assert all(f"complained {n}" in started for n in range(5)), started
    for unrelated in (outputs[9], outputs[10]):
        assert "heard" not in text_of(unrelated) and "complained" not in text_of(unrelated)
    assert not [o for o in outputs[9] if o["output_type"] == "stream"], outputs[9]


def test_a_background_failure_is_told_once_by_its_dashboard(outputs: list[Any]) -> None:
    (dashboard,) = [o for o in outputs[13] if "samza-snapshot" in o.get("data", {}).get("text/html", "")]
    html = dashboard["data"]["text/html"]
    assert "failed after 1 message" in html and "line 6 of the %%samza_task cell" in html
    for later in outputs[14:]:
        assert "six is right out" not in text_of(later), later
