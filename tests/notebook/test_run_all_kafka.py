"""Run All twice in one kernel for notebooks/05 (Kafka, issue 39 item 1): the second pass starts a new broker
whose topic holds fewer messages than the kernel's checkpoints say were processed; the job resets to the
oldest offset, processes every message and reports the reset, instead of processing nothing and hanging."""

from __future__ import annotations

import pytest

from tests.notebook.test_run_all import REPO, errors, notebook, run_all, stdout
from tests.requirements import require

require("aiokafka", "notebook 05 needs aiokafka (samza_nb[kafka])")

import nbformat  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

SHOW_RESETS = "print(*[note for note in samza.view.notes if note.startswith('offset reset:')], sep='\\n')"


def test_notebook_05_runs_twice_in_one_kernel_and_reports_the_reset() -> None:
    source = nbformat.read(REPO / "notebooks" / "05_kafka.ipynb", as_version=4)
    code = [cell.source for cell in source.cells if cell.cell_type == "code"]
    first_run = code.index("%samza_run")
    # After the first job of each pass: which partitions it reset (none on the first pass).
    once = [*code[: first_run + 2], SHOW_RESETS, *code[first_run + 2 :]]
    nb = run_all(notebook(*once, *once))  # every assert of the notebook holds on the second pass too
    assert not any(errors(cell) for cell in nb.cells)
    shown = [stdout(cell).strip().splitlines() for cell in nb.cells if cell.source == SHOW_RESETS]
    assert len(shown) == 2 and shown[0] == [], shown
    assert [line.split(": offset ")[0] for line in shown[1]] == [
        "offset reset: kafka.page-views#0",
        "offset reset: kafka.page-views#1",
    ], shown
    assert all(
        line.endswith("reset to offset 0 (systems.kafka.consumer.auto.offset.reset=earliest)")
        for line in shown[1]
    ), shown
