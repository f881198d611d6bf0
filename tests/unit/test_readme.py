"""The README's quickstart, and the examples of the documentation's how-to guides, run as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from samza_nb.testing import LOOP_MODES

ROOT = Path(__file__).parents[2]
README = ROOT / "README.md"
HOW_TO = ROOT / "docs" / "how-to"


def python_blocks(path: Path) -> list[str]:
    """The fenced python blocks of a Markdown file, in order."""
    return re.findall(r"^```python\n(.*?)^```$", path.read_text(), re.S | re.M)


def run_block(heading: str) -> object:
    """Run the first python block after the README's ``## <heading>``; its ``result``."""
    block = re.search(rf"## {heading}.*?```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), f"README {heading}", "exec"), namespace)
    return namespace["result"]


def run_page(page: str) -> dict[str, Any]:
    """Run the first python block of ``docs/how-to/<page>``; its namespace."""
    namespace: dict[str, Any] = {}
    exec(compile(python_blocks(HOW_TO / page)[0], f"docs/how-to/{page}", "exec"), namespace)
    return namespace


def test_quickstart_code_runs_and_counts_words() -> None:
    result = run_block("Quickstart")
    output = result.output("out")  # type: ignore[attr-defined]
    assert sorted(pair for values in output.values() for pair in values) == [
        ("a", 2),
        ("b", 1),
        ("b", 1),
        ("c", 1),
    ]


def test_the_testing_guide_runs_the_readme_task_and_its_loop_modes_example() -> None:
    task, modes = python_blocks(HOW_TO / "testing.md")[:2]
    readme_task = re.search(r"## Quickstart.*?```python\n(.*?)```", README.read_text(), re.S)
    assert readme_task is not None and readme_task.group(1) == task, "the guide starts from the README's task"
    namespace: dict[str, Any] = {}
    exec(compile(task, "docs/how-to/testing.md", "exec"), namespace)
    assert sorted(pair for values in namespace["result"].output("out").values() for pair in values) == [
        ("a", 2),
        ("b", 1),
        ("b", 1),
        ("c", 1),
    ]
    exec("import pytest\nfrom samza_nb.testing import LOOP_MODES", namespace)
    exec(compile(modes, "docs/how-to/testing.md loop modes", "exec"), namespace)
    test = namespace["test_word_count"]
    (parametrize,) = test.pytestmark
    assert parametrize.args == ("mode", LOOP_MODES)
    for mode in LOOP_MODES:
        test(mode)


def test_readme_gives_the_two_commands_and_ci_runs_the_test_one() -> None:
    text = README.read_text()
    assert "make run" in text and "make test" in text
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    assert "make test" in ci


def test_high_level_api_example_runs_and_fires_the_pane_on_both_watermarks() -> None:
    result = run_page("high-level-api.md")["result"]
    assert result.output("counts") == {0: [("ada", 0, 2)]}  # type: ignore[attr-defined]
    marks = result.watermarks  # type: ignore[attr-defined]
    assert {mark for streams in marks.values() for mark in streams.values()} == {1000}


def test_steering_example_steps_swaps_and_keeps_the_counts(tmp_path: Path, monkeypatch: Any) -> None:
    code = python_blocks(HOW_TO / "steering.md")[0].replace("/tmp/steer-demo", str(tmp_path))
    namespace: dict[str, Any] = {}
    exec(compile(code, "docs/how-to/steering.md", "exec"), namespace)
    assert namespace["result"] == [("a", 1), ("b", 1), ("a", 2), ("c", 1)]
    assert [step.message for step in namespace["steps"]] == ["a", "b"]
