"""Run All twice in one kernel, as a teacher re-running an example notebook does: every example notebook
(notebooks/*.ipynb) runs its code cells, then all of them again in the same kernel (nbclient, one kernel per
notebook, working in ``notebooks/`` as nbval does). The second pass must give the first pass's results, not
doubled: every assert of the notebook holds again (its counts are exact), each job processes as many
messages as in the first pass, and the outputs nbval checks (``# NBVAL_CHECK_OUTPUT``) are the same. A data
cell run again makes its in-memory streams anew, and says so in one line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.requirements import require

require("nbclient", "Run All needs nbclient (samza_nb[notebook])")
require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("pandas", "the SQL cells' DataFrames need pandas (samza_nb[notebook])")

import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from nbclient.exceptions import CellExecutionError  # noqa: E402

pytestmark = pytest.mark.slow

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
# 05 (Kafka) runs twice in tests/notebook/test_run_all_kafka.py, which also checks the offset resets its
# second pass reports; running it here too would only cost CI a second Kafka notebook.
TWICE_ELSEWHERE = {"05_kafka.ipynb"}
PATHS = sorted(path for path in NOTEBOOKS.glob("*.ipynb") if path.name not in TWICE_ELSEWHERE)
CHECKED = "# NBVAL_CHECK_OUTPUT"
# What a job's end tells (its cell, or the cell that stops it): how many messages it processed.
PROCESSED = re.compile(r"job '([^']+)' (?:finished|stopped): (\d+) messages?")
MADE_ANEW = re.compile(
    r"^in-memory stream \S+ made anew \(no running job reads it\): its \d+ old messages? dropped$"
)
LONGER = {"07_spark_pipeline.ipynb": 900}  # Spark's session and its Python workers start in the first pass


def params() -> list[Any]:
    return [pytest.param(path, marks=[pytest.mark.timeout(LONGER.get(path.name, 400))]) for path in PATHS]


def shown(cell: Any) -> str:
    """The text a cell shows: its streams, and the plain text of its results and displays."""
    parts = []
    for output in cell.outputs:
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type in ("execute_result", "display_data"):
            parts.append(output.data.get("text/plain", ""))
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}")
    return "".join(parts)


def failure(nb: Any) -> str:
    """The first failing cell of ``nb``, in one line: its pass, its first source line and its error."""
    count = len(nb.cells) // 2
    for number, cell in enumerate(nb.cells):
        for output in cell.outputs:
            if output.output_type == "error":
                where = f"pass {number // count + 1}, cell {number % count + 1}"
                return f"{where} ({cell.source.splitlines()[0]!r}): {output.ename}: {output.evalue}"
    return "no cell failed"


@pytest.mark.parametrize("path", params(), ids=[p.name for p in PATHS])
def test_an_example_notebook_runs_twice_in_one_kernel_with_the_same_results(path: Path) -> None:
    code = [cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in code + code])
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
    )
    try:
        client.execute()
    except CellExecutionError:
        pytest.fail(f"{path.name} run twice: {failure(nb)}")
    first, second = nb.cells[: len(code)], nb.cells[len(code) :]
    for number, (once, again) in enumerate(zip(first, second, strict=True), start=1):
        where = f"{path.name} cell {number}"
        assert PROCESSED.findall(shown(again)) == PROCESSED.findall(shown(once)), f"{where}: processed"
        if CHECKED in once.source:
            assert shown(again) == shown(once), f"{where}: an output nbval checks differs in the second pass"
        notes = [line for line in shown(again).splitlines() if "made anew (" in line]
        assert all(MADE_ANEW.match(line) for line in notes), f"{where}: {notes}"
        assert "made anew (" not in shown(once), f"{where}: a stream made anew in the first pass"
