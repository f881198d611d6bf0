"""The benchmarks (benchmarks/*.py) as modules, for their smoke tests: each is imported as
``benchmarks.<name>`` (the repository's root is on the path) and run at a tiny size."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

import pytest


def benchmark(name: str) -> ModuleType:
    """The module of ``benchmarks/<name>.py``."""
    return importlib.import_module(f"benchmarks.{name}")


@pytest.fixture
def checks() -> Iterator[list[str]]:
    """The output checks that pass during the test (benchmarks/output_check.py ``PASSED``), from empty."""
    passed: list[str] = benchmark("output_check").PASSED
    passed.clear()
    yield passed
    passed.clear()


__all__ = ["benchmark", "checks"]
