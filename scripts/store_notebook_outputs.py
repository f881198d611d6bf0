"""Run example notebooks as "Run All" does and store their outputs, for the documentation's tutorials.

``python scripts/store_notebook_outputs.py notebooks/01_quickstart.ipynb ...`` executes each notebook
in a fresh kernel (nbclient, working in ``notebooks/``) and writes it back with its outputs: every
dashboard as the static HTML snapshot it leaves once its job ended (a widget view's model would be gone in
a saved notebook, so widget views are dropped and their text/html kept). The notebook's metadata stays
what JupyterLab writes (``tests/notebook/test_example_notebooks.py`` checks it), and execution counts run
1, 2, ... as after a Run All (nbval refuses outputs without one). Notebooks that need Kafka or Spark are run
where those are up (``make test`` brings both up for the suite).
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def store(path: Path, timeout: int) -> int:
    """Execute ``path`` and write it back with its outputs; returns the number of outputs stored."""
    original = nbformat.read(path, as_version=4)
    executed = copy.deepcopy(original)
    resources = {"metadata": {"path": str(path.parent)}}
    NotebookClient(executed, timeout=timeout, kernel_name="python3", resources=resources).execute()
    stored = count = 0
    for before, after in zip(original.cells, executed.cells, strict=True):
        if after.cell_type != "code":
            continue
        count += 1
        outputs = []
        for output in after.get("outputs", []):
            data = output.get("data")
            if data is not None and WIDGET_VIEW in data:
                data = {k: v for k, v in data.items() if k != WIDGET_VIEW}
                if not data.get("text/html"):
                    continue  # a live view with nothing static beside it
                output["data"] = data
            if output.get("output_type") == "execute_result":
                output["execution_count"] = count
            outputs.append(output)
        before["outputs"] = outputs
        before["execution_count"] = count
        stored += len(outputs)
    original.metadata.pop("widgets", None)
    nbformat.write(original, path)
    return stored


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds a cell may take")
    args = parser.parse_args(argv)
    for path in args.notebooks:
        print(f"{path}: {store(path, args.timeout)} outputs stored", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
