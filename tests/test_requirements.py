"""``tests.requirements``: a missing dependency skips locally and fails under CI=true."""

from __future__ import annotations

import pytest

from tests.requirements import require

MISSING = "no_such_test_dependency_xyz"


def test_an_installed_module_is_returned() -> None:
    assert require("json", "always there").dumps([]) == "[]"


def test_a_missing_module_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match=f"{MISSING} is not installed.*: the why"):
        require(MISSING, "the why")


def test_a_missing_module_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=f"CI=true and this test cannot run: {MISSING}"):
        require(MISSING, "the why")
