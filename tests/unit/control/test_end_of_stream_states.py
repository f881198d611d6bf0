"""EndOfStreamStates: Samza's TestEndOfStreamStates ported, plus snapshots and the error cases."""

from __future__ import annotations

import json
import logging

import pytest

from samza_nb.api.streams import SystemStream, SystemStreamPartition
from samza_nb.control import EndOfStreamStates
from samza_nb.errors import SamzaError

INPUT = SystemStream("system", "input")
INTERMEDIATE = SystemStream("system", "intermediate")
INPUT_0 = SystemStreamPartition("system", "input", 0)
INT_0 = SystemStreamPartition("system", "intermediate", 0)
INT_1 = SystemStreamPartition("system", "intermediate", 1)


def states() -> EndOfStreamStates:
    return EndOfStreamStates({INPUT_0: 1, INT_0: 2, INT_1: 2})


def test_update() -> None:
    """Samza's TestEndOfStreamStates.testUpdate."""
    eos = states()
    assert not eos.stream_end_of_stream(INPUT)
    assert not eos.stream_end_of_stream(INTERMEDIATE)
    assert not eos.all_end_of_stream()

    assert eos.update(INPUT_0, None)  # a source partition's end
    assert eos.stream_end_of_stream(INPUT)
    assert not eos.stream_end_of_stream(INTERMEDIATE)
    assert not eos.all_end_of_stream()

    assert not eos.update(INT_0, "task 0")
    assert not eos.update(INT_1, "task 0")
    assert not eos.stream_end_of_stream(INTERMEDIATE)
    assert not eos.all_end_of_stream()

    assert eos.update(INT_0, "task 1")
    assert eos.update(INT_1, "task 1")
    assert eos.stream_end_of_stream(INTERMEDIATE)
    assert eos.all_end_of_stream()


def test_same_producer_twice_counts_once() -> None:
    eos = states()
    eos.update(INT_0, "task 0")
    eos.update(INT_0, "task 0")
    assert not eos.is_end_of_stream(INT_0)
    assert eos.producers_seen(INT_0) == ("task 0",)
    assert eos.producer_count(INT_0) == 2


def test_message_without_task_name_is_final_on_any_partition() -> None:
    eos = states()
    eos.update(INT_0, "task 0")
    assert eos.update(INT_0, None)
    assert eos.is_end_of_stream(INT_0)
    assert not eos.update(INT_0, None)  # already ended: not "just ended" again
    assert not eos.update(INT_0, "task 1")
    assert eos.is_end_of_stream(INT_0)


def test_source_partition_ends_with_its_single_producer() -> None:
    eos = states()
    assert eos.update(INPUT_0, "upstream")
    assert eos.is_end_of_stream(INPUT_0)


def test_stream_without_tracked_partitions_has_ended() -> None:
    assert states().stream_end_of_stream(SystemStream("system", "other"))
    assert EndOfStreamStates({}).all_end_of_stream()


def test_unknown_partition_is_named() -> None:
    other = SystemStreamPartition("system", "other", 3)
    eos = states()
    for call in (
        lambda: eos.update(other, "t"),
        lambda: eos.is_end_of_stream(other),
        lambda: eos.producers_seen(other),
        lambda: eos.state_of(other),
        lambda: eos.restore(other, {"tasks": [], "ended": False, "total": 1}),
    ):
        with pytest.raises(SamzaError, match=r"system\.other#3"):
            call()


@pytest.mark.parametrize("count", [0, -1, 1.5, True, "2"])
def test_bad_producer_count_is_named(count: object) -> None:
    with pytest.raises(SamzaError, match=r"system\.intermediate#0"):
        EndOfStreamStates({INT_0: count})  # type: ignore[dict-item]


def test_state_round_trip_through_json() -> None:
    eos = states()
    eos.update(INT_0, "task 1")
    eos.update(INPUT_0, None)
    snapshot = {ssp: json.loads(json.dumps(eos.state_of(ssp))) for ssp in eos.ssps}
    assert snapshot[INT_0] == {"tasks": ["task 1"], "ended": False, "total": 2}
    assert snapshot[INPUT_0] == {"tasks": [], "ended": True, "total": 1}

    restored = states()
    for ssp, state in snapshot.items():
        restored.restore(ssp, state)
    assert {ssp: restored.state_of(ssp) for ssp in restored.ssps} == snapshot
    # a restarted consumer that had end-of-stream from 1 of 2 producers needs only the other
    assert restored.update(INT_0, "task 0")
    assert not restored.all_end_of_stream()
    restored.update(INT_1, None)
    assert restored.all_end_of_stream()


def test_restore_an_ended_partition_then_reopen_it() -> None:
    eos = states()
    eos.restore(INPUT_0, {"tasks": [], "ended": True, "total": 1})
    eos.restore(INT_0, {"tasks": ["a", "b"], "ended": True, "total": 2})
    eos.restore(INT_1, {"tasks": ["a", "b"], "ended": True, "total": 2})
    assert eos.all_end_of_stream()
    eos.restore(INT_1, {"tasks": [], "ended": False, "total": 2})
    assert not eos.all_end_of_stream()
    assert eos.update(INT_1, None)
    assert eos.all_end_of_stream()


def test_restore_with_another_producer_count_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    eos = states()
    with caplog.at_level(logging.WARNING, logger="samza_nb.control.states"):
        eos.restore(INT_0, {"tasks": ["a", "b", "c"], "ended": True, "total": 3})
    assert not eos.is_end_of_stream(INT_0)
    assert eos.producers_seen(INT_0) == ()
    assert "system.intermediate#0" in caplog.text


@pytest.mark.parametrize(
    "state",
    [
        None,
        [],
        {"ended": False, "total": 2},
        {"tasks": "a", "ended": False, "total": 2},
        {"tasks": [1], "ended": False, "total": 2},
        {"tasks": [], "ended": "no", "total": 2},
        {"tasks": [], "ended": False},
        {"tasks": [], "ended": False, "total": 0},
        {"tasks": [], "ended": False, "total": "2"},
    ],
)
def test_malformed_state_is_refused_naming_the_partition(state: object) -> None:
    eos = states()
    with pytest.raises(SamzaError, match=r"system\.intermediate#1"):
        eos.restore(INT_1, state)
    assert eos.state_of(INT_1) == {"tasks": [], "ended": False, "total": 2}
