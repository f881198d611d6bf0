"""``task_factory``: a class, a zero-argument factory or a task instance, as the container's factory."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

import samza_nb
from samza_nb.api.task_factory import is_task_class, is_task_instance, task_factory
from samza_nb.errors import SamzaError


class Sync:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class Async:
    def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
        pass


def test_a_class_or_a_factory_makes_one_instance_per_call_an_instance_is_shared() -> None:
    for cls in (Sync, Async):
        factory = task_factory(cls)
        assert isinstance(factory(), cls) and factory() is not factory()
    made = task_factory(lambda: Sync())
    assert isinstance(made(), Sync) and made() is not made()
    instance = Async()
    assert task_factory(instance)() is instance


def test_what_counts_as_a_task() -> None:
    assert is_task_class(Sync) and is_task_class(Async) and not is_task_class(Sync())
    assert is_task_instance(Sync()) and not is_task_instance(Sync) and not is_task_instance(object())


@pytest.mark.parametrize("junk", [42, "Sync", None])
def test_anything_else_is_refused_naming_it(junk: object) -> None:
    with pytest.raises(SamzaError, match="is not a task") as info:
        task_factory(junk)
    assert repr(junk) in str(info.value)


def test_only_samza_nb_testing_imports_samza_nb_testing() -> None:
    """The runtime and the notebook must not depend on the test kit."""
    root = Path(samza_nb.__file__).parent
    offenders = []
    for file in root.rglob("*.py"):
        if (root / "testing") in file.parents:
            continue
        for node in ast.walk(ast.parse(file.read_text(), str(file))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            offenders += [f"{file.relative_to(root)}: {n}" for n in names if n.startswith("samza_nb.testing")]
    assert offenders == []
