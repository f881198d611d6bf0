"""Rounds: a sync task's messages over several partitions, round robin, taken a whole round at a time.

Each test compares the inline path (rounds, with the loop compiled for the round's width or the generic
one) with the observed mode, where every message goes the general path one choice at a time.
"""

from __future__ import annotations

import re
import traceback
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, RequestScope, SystemStream
from samza_nb.container.loop import rounds
from samza_nb.errors import TaskFailedError
from samza_nb.testing import TestRunner

OUT = SystemStream("test", "out")
SIZES = {0: 9, 1: 4, 2: 12, 3: 7, 4: 1}  # uneven: rounds narrow as partitions run dry

# inline/compiled: the loop compiled for the round's width; inline/generic: the loop for wide rounds.
MODES = ("inline/compiled", "inline/generic", "observed")


class Task:
    """Logs each message; sends even values on; asks for a commit or a shutdown, or raises, on request."""

    def __init__(self, log: list[tuple[int, str]], commit_every: int = 0, act_at: Any = None) -> None:
        self.log = log
        self.commit_every = commit_every
        self.act_at = act_at  # (partition, offset, "raise" | "shutdown")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        partition = envelope.ssp.partition
        if self.act_at is not None and self.act_at[:2] == (partition, envelope.offset):
            if self.act_at[2] == "raise":
                raise ValueError(f"bad message {envelope.offset}")
            coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)
        self.log.append((partition, envelope.offset))
        if envelope.message % 2 == 0:
            collector.send(OutgoingMessageEnvelope(OUT, envelope.message, partition=0))
        if self.commit_every and envelope.message % self.commit_every == self.commit_every - 1:
            coordinator.commit(RequestScope.CURRENT_TASK)


def run(mode: str, commit_every: int = 0, act_at: Any = None) -> dict[str, Any]:
    log: list[tuple[int, str]] = []
    runner = TestRunner.of(lambda: Task(log, commit_every, act_at), mode=mode.split("/")[0])
    runner.add_input("in", {p: list(range(n)) for p, n in SIZES.items()})
    outcome: dict[str, Any] = {"log": log}
    with pytest.MonkeyPatch.context() as patch:
        if mode == "inline/generic":
            patch.setattr(rounds, "MAX_UNROLLED", 0)
        try:
            result = runner.run(timeout=30)
        except TaskFailedError as exc:
            outcome["error"] = (exc.ssp.partition if exc.ssp else None, exc.offset)
            return outcome
    outcome["output"] = result.output("out")
    outcome["checkpoints"] = {t: {str(s): o for s, o in cp.items()} for t, cp in result.checkpoints.items()}
    outcome["processed"] = result.processed
    return outcome


@pytest.mark.parametrize("commit_every", [0, 3])
def test_rounds_take_the_order_of_the_chooser_and_leave_the_same_checkpoints(commit_every: int) -> None:
    results = {mode: run(mode, commit_every) for mode in MODES}
    observed = results["observed"]
    assert observed["processed"] == sum(SIZES.values())
    # Round robin over the partitions with messages (the check that the comparison is not vacuous).
    assert observed["log"][:5] == [(p, "0") for p in range(5)]
    for mode in MODES:
        assert results[mode] == observed, mode


@pytest.mark.parametrize("action", ["raise", "shutdown"])
def test_a_round_stops_at_the_call_that_failed_or_asked_to_stop(action: str) -> None:
    act_at = (2, "5", action)
    results = {mode: run(mode, act_at=act_at) for mode in MODES}
    observed = results["observed"]
    if action == "raise":
        assert observed["error"] == (2, "5")
        assert (2, "5") not in observed["log"]
    else:
        assert (2, "5") in observed["log"]
        assert observed["processed"] < sum(SIZES.values())
    for mode in MODES:
        assert results[mode] == observed, mode


def test_a_traceback_through_a_compiled_round_shows_its_generated_lines() -> None:
    runner = TestRunner.of(lambda: Task([], act_at=(2, "5", "raise")), mode="inline")
    runner.add_input("in", {p: list(range(n)) for p, n in SIZES.items()})
    with pytest.raises(TaskFailedError) as caught:
        runner.run(timeout=30)
    text = "".join(traceback.format_exception(caught.value))
    # The frame of the loop compiled for the round's width, with the line that called the task.
    assert re.search(
        r'File "<samza_nb round of \d+ #\d+>", line \d+, in process_rows\n +p(\d+)\(e\1, c\1, k\1\)\n', text
    ), text
