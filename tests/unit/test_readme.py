"""The README's quickstart runs as written."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from samza_nb.testing import LOOP_MODES

README = Path(__file__).parents[2] / "README.md"


def run_block(heading: str) -> object:
    """Run the first python block after ``## <heading>``; its ``result``."""
    block = re.search(rf"## {heading}.*?```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    namespace: dict[str, object] = {}
    exec(compile(block.group(1), f"README {heading}", "exec"), namespace)
    return namespace["result"]


def test_quickstart_code_runs_and_counts_words() -> None:
    result = run_block("Quickstart")
    output = result.output("out")  # type: ignore[attr-defined]
    assert sorted(pair for values in output.values() for pair in values) == [
        ("a", 2),
        ("b", 1),
        ("b", 1),
        ("c", 1),
    ]


def test_the_loop_modes_example_runs_the_quickstart_task_in_every_mode() -> None:
    blocks = re.search(r"## Quickstart.*?```python\n(.*?)```.*?```python\n(.*?)```", README.read_text(), re.S)
    assert blocks is not None
    namespace: dict[str, Any] = {}
    exec(compile(blocks.group(1), "README Quickstart", "exec"), namespace)
    exec("import pytest\nfrom samza_nb.testing import LOOP_MODES", namespace)
    exec(compile(blocks.group(2), "README loop modes", "exec"), namespace)
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
    result = run_block("High-level API")
    assert result.output("counts") == {0: [("ada", 0, 2)]}  # type: ignore[attr-defined]
    marks = result.watermarks  # type: ignore[attr-defined]
    assert {mark for streams in marks.values() for mark in streams.values()} == {1000}


def test_steering_example_steps_swaps_and_keeps_the_counts(tmp_path: Path, monkeypatch: Any) -> None:
    block = re.search(r"## Steering a running job.*?```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    code = block.group(1).replace("/tmp/steer-demo", str(tmp_path))
    namespace: dict[str, Any] = {}
    exec(compile(code, "README Steering", "exec"), namespace)
    assert namespace["result"] == [("a", 1), ("b", 1), ("a", 2), ("c", 1)]
    assert [step.message for step in namespace["steps"]] == ["a", "b"]
