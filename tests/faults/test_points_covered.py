"""Every declared crash point has a case in tests/faults, and every case names a declared point."""

from __future__ import annotations

import importlib
import pkgutil

import tests.faults
from samza_nb import crash_points


def covered_points() -> dict[str, str]:
    """Point → the test module whose ``COVERED`` tuple names it."""
    covered: dict[str, str] = {}
    for module_info in pkgutil.iter_modules(tests.faults.__path__):
        if module_info.name.startswith("test_") and module_info.name != "test_points_covered":
            module = importlib.import_module(f"tests.faults.{module_info.name}")
            for point in getattr(module, "COVERED", ()):
                assert point not in covered, f"{point} is covered twice ({covered[point]}, {module.__name__})"
                covered[point] = module.__name__
    return covered


def test_every_point_has_a_case() -> None:
    covered = covered_points()
    assert sorted(set(crash_points.POINTS) - set(covered)) == []
    assert sorted(set(covered) - set(crash_points.POINTS)) == []
    assert len(crash_points.POINTS) >= 20
