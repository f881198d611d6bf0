"""The README's notebook quickstart, cell by cell, in a real IPython shell."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell

from samza_nb.notebook.magics import SamzaMagics
from samza_nb.systems.inmemory import InMemoryBroker
from tests.requirements import require

from .helpers import run

README = Path(__file__).parents[2] / "README.md"


def test_the_notebook_quickstart_counts_pages(shell: InteractiveShell, magics: SamzaMagics) -> None:
    require("pandas", "DataFrames need pandas (samza_nb[notebook])")
    section = README.read_text().split("## Notebook quickstart", 1)[1].split("\n## ", 1)[0]
    cells = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace = f"readme-{uuid.uuid4().hex[:8]}"
    # A private broker namespace instead of "mem", so tests do not share streams.
    cells = [cell.replace('named("mem")', f'named("{namespace}", "mem")') for cell in cells]
    cells = [
        cell.replace("mem.clicks", f"mem.clicks\nsystems.mem.inmemory.namespace = {namespace}")
        for cell in cells
    ]
    setup, config, task, runs, sql = cells
    try:
        for cell in (setup.replace("%load_ext samza_nb\n", ""), config, task):
            assert run(shell, cell).success, cell
        InMemoryBroker.named(namespace).end_stream("clicks")  # bounded, so --wait returns
        assert run(shell, "%samza_run --wait --timeout 60").success
        body = sql.split("\n", 1)[1]
        frame = shell.run_cell_magic("samza_sql", "counts", body)
        assert frame["views"].tolist()[0] == 10_000 // 7 + 1  # page-0 .. page-3 get 1429 views each
        assert int(frame["views"].sum()) == 10_000
        assert len(frame) == 7
        assert "%samza_stop" in runs and "%samza_status" in runs
    finally:
        InMemoryBroker.drop(namespace)
