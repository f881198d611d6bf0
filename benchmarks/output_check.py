"""The benchmarks' output checks: a rate is worth nothing when the run computed something else than its
baseline (skipped, doubled or wrong messages, a crashed run that looks fast).

``same(what, got, expected)`` raises :class:`OutputMismatch` naming ``what`` and the first difference;
each check that passed is noted in ``PASSED`` (the smoke tests in tests/ read it, to see the checks ran).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

PASSED: list[str] = []
"""What every check that passed so far checked, in order."""


class OutputMismatch(Exception):
    """A benchmark's output is not what its baseline computed."""


def same(what: str, got: Any, expected: Any) -> None:
    """Nothing when ``got == expected``; else an :class:`OutputMismatch` naming ``what`` and where they
    first differ."""
    if got == expected:
        PASSED.append(what)
        return
    raise OutputMismatch(f"{what}: {difference(got, expected)}")


def difference(got: Any, expected: Any) -> str:
    """Where ``got`` first differs from ``expected``, in one line."""
    if isinstance(got, Mapping) and isinstance(expected, Mapping):
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        if missing or extra:
            first = f"first {missing[:3]!r}), {len(extra)} extra (first {extra[:3]!r})"
            return f"{len(missing)} key(s) missing ({first}"
        key = next(k for k in expected if got[k] != expected[k])
        return f"at key {key!r}: got {got[key]!r:.80}, expected {expected[key]!r:.80}"
    if isinstance(got, Sequence) and isinstance(expected, Sequence) and not isinstance(got, (str, bytes)):
        for index, (a, b) in enumerate(zip(got, expected, strict=False)):
            if a != b:
                return f"at index {index} of {len(expected)}: got {a!r:.80}, expected {b!r:.80}"
        return f"got {len(got)} items, expected {len(expected)}"
    return f"got {got!r:.200}, expected {expected!r:.200}"


__all__ = ["PASSED", "OutputMismatch", "difference", "same"]
