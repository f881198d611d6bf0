"""The container's event loop helpers (samza_nb/container/event_loop.py)."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb.errors import TaskFailedError
from samza_nb.testing import LOOP_MODES, LoopMode, TestRunner


class Boom:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        raise ValueError("boom")


def chain(error: BaseException | None) -> list[BaseException]:
    """``error`` and the errors it was raised from or while handling, outermost first."""
    found: list[BaseException] = []
    while error is not None and error not in found:
        found.append(error)
        error = error.__cause__ or error.__context__
    return found


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_task_failure_carries_its_own_error_and_no_unrelated_context(mode: LoopMode) -> None:
    with pytest.raises(TaskFailedError) as info:
        TestRunner.of(Boom, mode=mode).add_input("in", [1, 2]).run(timeout=10)
    errors = chain(info.value)
    assert [type(error) for error in errors] == [TaskFailedError, ValueError], [repr(e) for e in errors]
    assert str(errors[1]) == "boom"
