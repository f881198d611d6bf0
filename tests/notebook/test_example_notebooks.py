"""The example notebooks (notebooks/*.ipynb) open unmodified in JupyterLab: their stored metadata is what
Lab writes once the kernel is up (the ipykernel kernelspec, the kernel's full ``language_info``), every cell
has an id (nbformat 4.5), and code cells hold no widget outputs (their models would be gone)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
RUNTIME = Path(__file__).resolve().parents[2] / "binder" / "runtime.txt"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_a_notebook_opens_unmodified_in_jupyterlab(path: Path) -> None:
    notebook = json.loads(path.read_text())
    assert (notebook["nbformat"], notebook["nbformat_minor"]) == (4, 5)
    metadata = notebook["metadata"]
    assert metadata["kernelspec"] == {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    language = metadata["language_info"]
    assert {key: value for key, value in language.items() if key != "version"} == {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
    }
    binder = RUNTIME.read_text().strip().removeprefix("python-")  # the Python the notebooks are run with
    assert language["version"].startswith(binder + "."), (language["version"], binder)
    ids = [cell.get("id") for cell in notebook["cells"]]
    assert all(ids) and len(set(ids)) == len(ids)
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            assert "application/vnd.jupyter.widget-view+json" not in output.get("data", {})
