"""Run All as Jupyter does it (nbclient executes a notebook's cells in order in a real kernel and stops at
the first cell that fails): the README's quickstart runs twice in one kernel (the example notebooks do in
test_example_notebooks_twice); a misspelt config key stops Run All at the config cell, naming the key and
the one it resembles, while a key of the user's own passes; recreating an in-memory stream a running job
reads fails its cell in one line."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from tests.requirements import require

require("nbclient", "Run All needs nbclient (samza_nb[notebook])")
require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("pandas", "the SQL cell's DataFrame needs pandas (samza_nb[notebook])")

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellExecutionError  # noqa: E402

from .test_readme_quickstart import quickstart_cells  # noqa: E402

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[2]
SHOW_VIEWS = 'print(repr(_["views"].tolist()))'


def notebook(*cells: str) -> Any:
    """A notebook of ``cells`` (code cells, in order)."""
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell) for cell in cells])


def run_all(nb: Any) -> Any:
    """Run every cell of ``nb`` in order in a fresh kernel started in the repository, as Run All does;
    raises CellExecutionError at the first cell that fails (its outputs are in ``nb`` then)."""
    client = NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(REPO)}}
    )
    return client.execute()


def stdout(cell: Any) -> str:
    return "".join(
        o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"
    )


def errors(cell: Any) -> list[Any]:
    return [o for o in cell.outputs if o.output_type == "error"]


def test_the_readme_quickstart_runs_twice_in_one_kernel_and_counts_the_same() -> None:
    cells = quickstart_cells()
    assert cells[-1].startswith("%%samza_sql counts")
    once = [*cells, SHOW_VIEWS]
    nb = run_all(notebook(*once, *once))
    shown = [ast.literal_eval(stdout(cell).strip()) for cell in nb.cells if cell.source == SHOW_VIEWS]
    expected = [1429] * 4 + [1428] * 3
    assert shown == [expected, expected], "the second pass counts every view once, as the first did"
    run_cells = [cell for cell in nb.cells if cell.source.strip() == "%samza_run"]
    assert "made anew" not in stdout(run_cells[0])
    assert (
        "job 'clicks': input mem.clicks was made anew since the job last ran: its checkpoints and state "
        "start afresh" in stdout(run_cells[1])
    )


DATA = """%load_ext samza_nb
from samza_nb.systems.inmemory.system import InMemoryBroker
broker = InMemoryBroker.named("runall")
broker.create_stream("words", 1, replace=True)
for word in ["a", "b", "c"]:
    broker.send("words", word)
broker.end_stream("words")"""

CONFIG = """%%samza_config
job.name = words
task.inputs = runall.words
systems.runall.samza.factory = samza_nb.systems.inmemory.InMemorySystemFactory
systems.runall.samza.offset.default = oldest
{extra}"""

TASK = """%%samza_task
class Words:
    seen = []
    def process(self, envelope, collector, coordinator):
        Words.seen.append(envelope.message)"""

AFTER = ["%samza_run --wait --timeout 60", "assert Words.seen == ['a', 'b', 'c'], Words.seen"]


@pytest.mark.parametrize(
    ("extra", "line"),
    [
        (
            "systems.runall.samza.ofset.default = upcoming",
            "NotebookError: samza_config: unknown key systems.runall.samza.ofset.default: did you mean "
            "systems.runall.samza.offset.default?",
        ),
        (
            "systems.runal.samza.offset.default = upcoming",
            "NotebookError: samza_config: unknown key systems.runal.samza.offset.default: system 'runal' has "
            "no factory (systems.runal.samza.factory): did you mean systems.runall.samza.offset.default?",
        ),
    ],
)
def test_a_misspelt_key_stops_run_all_at_the_config_cell(extra: str, line: str) -> None:
    nb = notebook(DATA, CONFIG.format(extra=extra), TASK, *AFTER)
    with pytest.raises(CellExecutionError):
        run_all(nb)
    config_cell = nb.cells[1]
    (error,) = errors(config_cell)
    assert error.traceback == [line], "one line, no traceback"
    assert [cell.execution_count for cell in nb.cells[2:]] == [None] * len([TASK, *AFTER]), "Run All stopped"


def test_a_key_of_the_users_own_passes_and_the_job_runs() -> None:
    nb = run_all(notebook(DATA, CONFIG.format(extra="myapp.greeting = hello"), TASK, *AFTER))
    assert not any(errors(cell) for cell in nb.cells)
    assert "job 'words': 5 keys" in stdout(nb.cells[1])


def test_recreating_a_stream_a_running_job_reads_fails_its_cell_in_one_line() -> None:
    unbounded = DATA.replace('broker.end_stream("words")', "")
    cells = [
        unbounded,
        CONFIG.format(extra=""),
        TASK,
        "%samza_run --no-dashboard",
        "assert await samza.until(lambda view: view.processed == 3, timeout=60)",
        unbounded,  # the data cell again, while job 'words' reads the stream
        "print('not reached')",
    ]
    nb = notebook(*cells)
    with pytest.raises(CellExecutionError):
        run_all(nb)
    (error,) = errors(nb.cells[5])
    assert error.traceback == [
        "StreamInUseError: in-memory stream runall.words cannot be recreated while running job 'words' "
        "reads it: stop the job first"
    ]
    assert nb.cells[6].execution_count is None
    assert json.dumps(nb.cells[5].outputs).count("Traceback") == 0
