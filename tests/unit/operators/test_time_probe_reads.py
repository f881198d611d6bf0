"""A container's event-time answer is whole or refused: a task whose snapshot cannot be read (a thread-pool
task changing it meanwhile) is asked again, then refused naming it, never left out of the answer."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from samza_nb.container.queries.reader import StoreNotReady
from samza_nb.operators.impl.time_probe import SNAPSHOT_ATTEMPTS, operator_times
from samza_nb.operators.task import StreamOperatorTask


class Changing(StreamOperatorTask):
    """An operator task whose event time raises as a dict changed during iteration ``failures`` times."""

    def __init__(self, failures: int, snapshot: Any) -> None:
        super().__init__(describer=None)  # type: ignore[arg-type]  # (never initialised: no describer)
        self.failures = failures
        self.snapshot = snapshot

    def event_time(self) -> Any:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("dictionary changed size during iteration")
        return self.snapshot


def container(*tasks: tuple[str, StreamOperatorTask]) -> Any:
    return SimpleNamespace(tasks={name: SimpleNamespace(name=name, task=task) for name, task in tasks})


def test_a_snapshot_that_changed_while_read_is_read_again() -> None:
    times = operator_times(container(("Partition 0", Changing(SNAPSHOT_ATTEMPTS - 1, "t0"))))
    assert times == {"Partition 0": "t0"}


def test_a_task_whose_snapshot_keeps_changing_refuses_the_answer_naming_it() -> None:
    tasks = container(("Partition 0", Changing(0, "t0")), ("Partition 1", Changing(SNAPSHOT_ATTEMPTS, "t1")))
    with pytest.raises(StoreNotReady, match="'Partition 1'.*ask again"):
        operator_times(tasks)
