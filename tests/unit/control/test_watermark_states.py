"""WatermarkStates: Samza's TestWatermarkStates ported, plus snapshots and the error cases."""

from __future__ import annotations

import json
import logging

import pytest

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.control import WATERMARK_NOT_EXIST, WatermarkStates
from samza_nb.errors import SamzaError

IDLE_TIMEOUT_MS = 600_000
INPUT = SystemStream("system", "input")
INTERMEDIATE = SystemStream("system", "intermediate")
INPUT_0 = SystemStreamPartition("system", "input", 0)
INT_0 = SystemStreamPartition("system", "intermediate", 0)
INT_1 = SystemStreamPartition("system", "intermediate", 1)
COUNTS = {INPUT_0: 1, INT_0: 2, INT_1: 2}


class FakeClock:
    """A clock the test moves (Samza's MockSystemTime)."""

    def __init__(self) -> None:
        self.now = 1_700_000_000_000.0

    def advance(self, ms: float) -> None:
        self.now += ms

    def __call__(self) -> float:
        return self.now


def test_update() -> None:
    """Samza's TestWatermarkStates.testUpdate."""
    wm = WatermarkStates(COUNTS)
    # a source watermark (no task name) on input to 5
    assert wm.update(INPUT_0, None, 5)
    assert wm.stream_watermark(INPUT) == 5
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    assert not wm.update(INT_0, "task 0", 6)
    assert wm.watermark(INT_0) == WATERMARK_NOT_EXIST
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    assert wm.update(INT_0, "task 1", 3)
    assert wm.watermark(INT_0) == 3
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    wm.update(INT_1, "task 0", 10)
    assert wm.watermark(INT_1) == WATERMARK_NOT_EXIST
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    wm.update(INT_1, "task 1", 4)
    assert wm.watermark(INT_1) == 4
    assert wm.stream_watermark(INTERMEDIATE) == 3  # the min over the partitions

    wm.update(INT_0, "task 1", 8)
    assert wm.watermark(INT_0) == 6
    assert wm.stream_watermark(INTERMEDIATE) == 4

    wm.update(INT_1, "task 1", 7)
    assert wm.watermark(INT_1) == 7
    assert wm.stream_watermark(INTERMEDIATE) == 6


def test_idle() -> None:
    """Samza's TestWatermarkStates.testIdle (default quorum)."""
    clock = FakeClock()
    wm = WatermarkStates(COUNTS, IDLE_TIMEOUT_MS, clock)

    wm.update(INT_0, "task 0", 1)
    assert wm.watermark(INT_0) == WATERMARK_NOT_EXIST
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    clock.advance(IDLE_TIMEOUT_MS)
    # computed from both producers
    wm.update(INT_0, "task 1", 4)
    assert wm.watermark(INT_0) == 1
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    # computed from "task 1" alone: "task 0" is idle past the timeout
    wm.update(INT_0, "task 1", 5)
    assert wm.watermark(INT_0) == 5
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    clock.advance(1)
    # the idle timeout since creation has passed: "task 0" alone sets int p1
    wm.update(INT_1, "task 0", 6)
    assert wm.watermark(INT_1) == 6
    assert wm.stream_watermark(INTERMEDIATE) == 5

    # a watermark below the current one: ignored
    wm.update(INT_1, "task 1", 2)
    assert wm.watermark(INT_1) == 6
    assert wm.stream_watermark(INTERMEDIATE) == 5

    clock.advance(1)
    # "task 0" updated, but below the current watermark
    wm.update(INT_0, "task 0", 3)
    assert wm.watermark(INT_0) == 5
    assert wm.stream_watermark(INTERMEDIATE) == 5

    clock.advance(1)
    wm.update(INT_0, "task 0", 7)
    assert wm.watermark(INT_0) == 5
    assert wm.stream_watermark(INTERMEDIATE) == 5

    clock.advance(1)
    wm.update(INT_0, "task 1", 10)
    assert wm.watermark(INT_0) == 7
    assert wm.stream_watermark(INTERMEDIATE) == 6


def test_quorum() -> None:
    """Samza's TestWatermarkStates.testQuorum (quorum 1.0: every producer must be active)."""
    clock = FakeClock()
    wm = WatermarkStates(COUNTS, IDLE_TIMEOUT_MS, clock, quorum=1.0)

    wm.update(INT_0, "task 0", 1)
    assert wm.watermark(INT_0) == WATERMARK_NOT_EXIST
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    wm.update(INT_0, "task 1", 3)
    assert wm.watermark(INT_0) == 1
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    clock.advance(IDLE_TIMEOUT_MS)
    # "task 0" is idle, so "task 1" alone does not make the quorum
    wm.update(INT_0, "task 1", 5)
    assert wm.watermark(INT_0) == 1
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST

    clock.advance(1)
    # "task 0" is back: quorum met
    wm.update(INT_0, "task 0", 3)
    assert wm.watermark(INT_0) == 3
    assert wm.stream_watermark(INTERMEDIATE) == WATERMARK_NOT_EXIST


def test_startup() -> None:
    """Samza's TestWatermarkStates.testStartup: one producer active since startup."""
    clock = FakeClock()
    wm = WatermarkStates(COUNTS, IDLE_TIMEOUT_MS, clock)

    wm.update(INT_0, "task 0", 1)
    assert wm.watermark(INT_0) == WATERMARK_NOT_EXIST

    clock.advance(IDLE_TIMEOUT_MS)
    assert wm.update(INT_0, "task 0", 5)
    assert wm.watermark(INT_0) == 5


def test_without_idle_timeout_a_silent_producer_holds_the_watermark() -> None:
    clock = FakeClock()
    wm = WatermarkStates(COUNTS, -1, clock)
    wm.update(INT_0, "task 0", 1)
    clock.advance(10 * IDLE_TIMEOUT_MS)
    assert not wm.update(INT_0, "task 0", 5)
    assert wm.watermark(INT_0) == WATERMARK_NOT_EXIST


def test_direct_watermarks_never_go_back() -> None:
    wm = WatermarkStates(COUNTS)
    assert wm.update(INT_1, None, 9)
    assert not wm.update(INT_1, None, 4)
    assert wm.watermark(INT_1) == 9
    # a producer's watermark below the direct one does not move it back either
    wm.update(INT_1, "task 0", 2)
    wm.update(INT_1, "task 1", 3)
    assert wm.watermark(INT_1) == 9


def test_producer_going_back_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    wm = WatermarkStates(COUNTS)
    wm.update(INT_0, "task 0", 8)
    with caplog.at_level(logging.WARNING, logger="samza_nb.control.states"):
        wm.update(INT_0, "task 0", 2)
    assert "system.intermediate#0" in caplog.text
    wm.update(INT_0, "task 1", 9)
    assert wm.watermark(INT_0) == 8


def test_stream_watermark_of_untracked_stream() -> None:
    wm = WatermarkStates(COUNTS)
    assert wm.stream_watermark(SystemStream("system", "other")) == WATERMARK_NOT_EXIST
    assert WatermarkStates({}).stream_watermark(INPUT) == WATERMARK_NOT_EXIST


def test_unknown_partition_is_named() -> None:
    other = SystemStreamPartition("system", "other", 2)
    wm = WatermarkStates(COUNTS)
    for call in (
        lambda: wm.update(other, "t", 1),
        lambda: wm.watermark(other),
        lambda: wm.state_of(other),
        lambda: wm.restore(other, {"timestamps": {}, "watermark": -1, "total": 1}),
    ):
        with pytest.raises(SamzaError, match=r"system\.other#2"):
            call()


@pytest.mark.parametrize("quorum", [-0.1, 1.5])
def test_bad_quorum(quorum: float) -> None:
    with pytest.raises(SamzaError, match="quorum"):
        WatermarkStates(COUNTS, quorum=quorum)


def test_state_round_trip_through_json() -> None:
    wm = WatermarkStates(COUNTS)
    wm.update(INPUT_0, None, 12)
    wm.update(INT_0, "task 0", 6)
    wm.update(INT_1, "task 0", 4)
    wm.update(INT_1, "task 1", 5)
    snapshot = {ssp: json.loads(json.dumps(wm.state_of(ssp))) for ssp in wm.ssps}
    assert snapshot[INT_0] == {"timestamps": {"task 0": 6}, "watermark": -1, "total": 2}
    assert snapshot[INT_1] == {"timestamps": {"task 0": 4, "task 1": 5}, "watermark": 4, "total": 2}
    assert snapshot[INPUT_0] == {"timestamps": {}, "watermark": 12, "total": 1}

    restored = WatermarkStates(COUNTS)
    for ssp, state in snapshot.items():
        restored.restore(ssp, state)
    assert {ssp: restored.state_of(ssp) for ssp in restored.ssps} == snapshot
    # the restored "task 0" report still counts: "task 1" alone completes the partition
    assert restored.update(INT_0, "task 1", 7)
    assert restored.watermark(INT_0) == 6
    assert restored.stream_watermark(INTERMEDIATE) == 4


def test_restore_keeps_the_larger_watermark() -> None:
    wm = WatermarkStates(COUNTS)
    wm.update(INT_0, None, 50)
    wm.restore(INT_0, {"timestamps": {"a": 10, "b": 20}, "watermark": 10, "total": 2})
    assert wm.watermark(INT_0) == 50


def test_restored_producers_are_active_from_the_restore() -> None:
    clock = FakeClock()
    wm = WatermarkStates(COUNTS, IDLE_TIMEOUT_MS, clock)
    clock.advance(IDLE_TIMEOUT_MS)
    wm.restore(INT_0, {"timestamps": {"task 0": 3, "task 1": 4}, "watermark": 3, "total": 2})
    clock.advance(1)
    # "task 0" is not idle (restored just now), so "task 1" alone cannot move the watermark past it
    assert not wm.update(INT_0, "task 1", 9)
    assert wm.watermark(INT_0) == 3


def test_restore_with_another_producer_count_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    wm = WatermarkStates(COUNTS)
    with caplog.at_level(logging.WARNING, logger="samza_nb.control.states"):
        wm.restore(INT_1, {"timestamps": {"a": 10}, "watermark": 10, "total": 1})
    assert wm.state_of(INT_1) == {"timestamps": {}, "watermark": -1, "total": 2}
    assert "system.intermediate#1" in caplog.text


@pytest.mark.parametrize(
    "state",
    [
        None,
        "x",
        {"watermark": -1, "total": 2},
        {"timestamps": [], "watermark": -1, "total": 2},
        {"timestamps": {"a": "1"}, "watermark": -1, "total": 2},
        {"timestamps": {"a": 1.5}, "watermark": -1, "total": 2},
        {"timestamps": {}, "watermark": -2, "total": 2},
        {"timestamps": {}, "watermark": None, "total": 2},
        {"timestamps": {}, "watermark": -1, "total": 0},
        {"timestamps": {}, "watermark": -1},
    ],
)
def test_malformed_state_is_refused_naming_the_partition(state: object) -> None:
    wm = WatermarkStates(COUNTS)
    with pytest.raises(SamzaError, match=r"system\.intermediate#0"):
        wm.restore(INT_0, state)
    assert wm.state_of(INT_0) == {"timestamps": {}, "watermark": -1, "total": 2}
