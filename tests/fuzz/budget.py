"""The fuzzing budget and the one property every parser must keep.

``SAMZA_NB_FUZZ`` picks the budget: unset (CI, ``make test``) runs each property on a small, fixed,
derandomized set of examples, so the whole directory takes seconds and a failure reproduces on every run;
``nightly`` (``make fuzz-nightly``) runs many more random examples per property, with hypothesis' example
database keeping what it finds. ``SAMZA_NB_FUZZ_EXAMPLES`` overrides the number of examples of either.

``parses`` accepts a SamzaError for any input, so every "never crashes" property has a partner run with
``valid_inputs``: values built from the format (tests/fuzz/valid.py) must parse and round-trip.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Final, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis.database import DirectoryBasedExampleDatabase

from samza_nb.errors import SamzaError

NIGHTLY: Final = os.environ.get("SAMZA_NB_FUZZ", "").strip().lower() == "nightly"
EXAMPLES: Final = int(os.environ.get("SAMZA_NB_FUZZ_EXAMPLES", "20000" if NIGHTLY else "100"))

_T = TypeVar("_T")

fuzz: Final = settings(
    max_examples=EXAMPLES,
    deadline=None,  # a shared CI machine: hangs are caught by pytest-timeout, not per-example timing
    derandomize=not NIGHTLY,
    database=DirectoryBasedExampleDatabase(".hypothesis/examples") if NIGHTLY else None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
"""The settings of every fuzz property (see the module docstring)."""

valid_inputs: Final = settings(fuzz, max_examples=EXAMPLES if NIGHTLY else max(1, EXAMPLES // 4))
"""The settings of the valid-input properties (inputs built from the format, which must parse and round
trip): a quarter of the examples in CI, each example being a whole document rather than a few bytes."""


def parses(parse: Callable[..., _T], *args: Any, **kwargs: Any) -> _T | None:
    """``parse(*args, **kwargs)``: its value, or None when it raised a SamzaError with a message. Any other
    exception (a TypeError, a RecursionError, an IndexError deep inside) propagates and fails the property."""
    try:
        return parse(*args, **kwargs)
    except SamzaError as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return None


__all__ = ["EXAMPLES", "NIGHTLY", "fuzz", "parses", "valid_inputs"]
