"""A %%samza_task cell as a module for container processes: the names it uses without defining them, the
module text (line numbers kept), the file (one per distinct source), and the config summary of a job of
several containers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from samza_nb.notebook.magics import cell_config
from samza_nb.notebook.magics.task_cell import TaskDefinition
from samza_nb.notebook.magics.task_module import module_source, undefined_names, write_task_module


@pytest.mark.parametrize(
    ("source", "missing"),
    [
        ("\nimport os\nclass T:\n    def process(self, e, c, k):\n        os.getpid(), len(e)\n", []),
        (
            "\nclass T(StreamTask):\n    def process(self, e, c, k):\n"
            "        c.send(OutgoingMessageEnvelope)\n",
            [],
        ),
        ("\nclass T:\n    def process(self, e, c, k):\n        helper(e)\n", ["helper"]),
        ("\nclass T(Base):\n    limit = LIMIT\n", ["Base", "LIMIT"]),
        ("\nfrom json import dumps as d\nclass T:\n    def process(self, e, c, k):\n        d(e)\n", []),
        (
            "\nclass T:\n    def init(self, ctx):\n        global seen\n        seen = []\n"
            "    def process(self, e, c, k):\n        seen.append(e)\n",
            [],
        ),
        (
            "\nclass T:\n    def process(self, e, c, k):\n        def inner():\n            return counter\n",
            ["counter"],
        ),
        ("\nclass T:\n    def process(self, e, c, k):\n        [x for x in total]\n", ["total"]),
    ],
)
def test_undefined_names(source: str, missing: list[str]) -> None:
    assert undefined_names(source) == missing


def test_module_source_keeps_the_cell_line_numbers() -> None:
    cell = "\nclass T:\n    pass"
    lines = module_source(cell).splitlines()
    assert lines[0].startswith("from samza_nb import *") and lines[1:] == ["class T:", "    pass"]
    # Without the magic's empty first line, the preamble comes first.
    assert module_source("class T:\n    pass").splitlines()[1] == "class T:"


def test_the_module_imports_and_an_edited_cell_is_a_new_module(tmp_path: Path) -> None:
    source = "\nclass Count(StreamTask):\n    def process(self, e, c, k):\n        pass"
    first = write_task_module(TaskDefinition("Count", object, source), tmp_path)
    again = write_task_module(TaskDefinition("Count", object, source), tmp_path)
    edited = write_task_module(TaskDefinition("Count", object, source + "  # edited"), tmp_path)
    assert first == again != edited
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{dotted.rpartition('.')[0]}.py" for dotted in (first, edited)
    )
    module, _, name = first.rpartition(".")
    spec = importlib.util.spec_from_file_location(module, tmp_path / f"{module}.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    assert hasattr(getattr(loaded, name), "process")


def test_config_summary_and_checkpoints_of_several_containers() -> None:
    several = {"job.name": "j", "task.inputs": "log.in", "job.container.count": "2"}
    assert cell_config.summary(several).endswith("2 container processes, checkpoints in the durable log")
    assert not cell_config.uses_notebook_checkpoints(several)
    assert "job.logged.store.base.dir" not in cell_config.effective_config(several, "/tmp/kernel-state")
    one = {**several, "job.container.count": "1"}
    assert cell_config.uses_notebook_checkpoints(one)
    assert cell_config.effective_config(one, "/tmp/kernel-state")["job.logged.store.base.dir"] == (
        "/tmp/kernel-state"
    )
