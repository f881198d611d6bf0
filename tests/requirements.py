"""Optional test dependencies: skipped on a developer machine without them, a loud failure in CI.

``require(module, why)`` imports ``module`` and returns it. When it cannot be imported, the test (or, at
module level, the whole file) is skipped, unless ``CI=true``: in CI every dependency must be installed, so a
missing one fails the run naming the module and why it is needed instead of silently testing less.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def in_ci() -> bool:
    """True when the environment says this is a CI run (``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def unavailable(problem: str) -> NoReturn:
    """Skip because ``problem`` keeps this test from running here; in CI, fail naming it."""
    if in_ci():
        pytest.fail(f"CI=true and this test cannot run: {problem}", pytrace=False)
    pytest.skip(problem, allow_module_level=True)


def require(module: str, why: str) -> ModuleType:
    """``module``, imported; when it is missing, :func:`unavailable` with ``why`` (e.g. which extra)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        unavailable(f"{module} is not installed ({exc}): {why}")
