"""The README's notebook quickstart, run verbatim: each fenced python block of the section is one cell of a
fresh kernel (in the repository's root), run in order exactly as written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.requirements import require

from .kernel import Kernel

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")
require("pandas", "the SQL cell's DataFrame needs pandas (samza_nb[notebook])")

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[2]
README = REPO / "README.md"


def quickstart_cells() -> list[str]:
    """The fenced python blocks of the README's "Notebook quickstart" section, in order."""
    section = README.read_text().split("\n## Notebook quickstart\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^```python\n(.*?)^```$", section, re.S | re.M)


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    k = Kernel(cwd=str(REPO))
    yield k
    k.close()


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


def test_the_notebook_quickstart_runs_verbatim_and_counts_every_view_once(kernel: Kernel) -> None:
    for cell in quickstart_cells():
        reply = kernel.run(cell, timeout=120, check=False)
        assert reply.status == "ok", f"{reply.error or reply.stderr}\n--- in the cell:\n{cell}"
        assert not reply.of_type("error"), cell
    views = kernel.value('_["views"].tolist()')  # the SQL cell's DataFrame
    assert sum(views) == 10_000
    assert views == [1429] * 4 + [1428] * 3  # page-0 .. page-3 got one more view than the other three
    assert sorted(kernel.value('_["page"].tolist()')) == [f"page-{i}" for i in range(7)]
