"""The README's notebook quickstart has one cell per step. Running it verbatim, twice in one kernel, is
tests/notebook/test_run_all.py's test of it (once would be a subset of that)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).parents[2]
README = REPO / "README.md"


def quickstart_cells() -> list[str]:
    """The fenced python blocks of the README's "Notebook quickstart" section, in order."""
    section = README.read_text().split("\n## Notebook quickstart\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)


def test_the_quickstart_has_one_cell_per_step() -> None:
    cells = quickstart_cells()
    firsts = [cell.splitlines()[0] for cell in cells]
    assert firsts[1:] == [
        "%%samza_config",
        "%%samza_task",
        "%samza_run",
        "%samza_status",
        "%samza_stop",
        "%samza_run --wait",
        "%samza_checkpoints",
        "%%samza_sql counts",
    ]
    assert firsts[0] == "%load_ext samza_nb"
    for cell in cells:  # explanations are prose between the cells, not comments in them
        assert not re.search(r"^\s*%[^%].*#", cell, re.M), cell
