"""Port of Samza's TestTieredPriorityChooser, plus the error cases."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.chooser import DefaultChooser, MessageChooser, RoundRobinChooser, TieredPriorityChooser
from samza_nb.errors import SamzaError

from .support import MockMessageChooser, envelope

Build = Callable[
    [Mapping[SystemStream, int], Mapping[int, MessageChooser], "MessageChooser | None"], MessageChooser
]
BUILDERS: dict[str, Build] = {
    "tiered": TieredPriorityChooser,
    # A DefaultChooser with only priorities behaves like a plain TieredPriorityChooser.
    "default": lambda priorities, choosers, default: DefaultChooser(default, None, priorities, choosers),
}

e1 = envelope("stream", 0, None, 1)
e2 = envelope("stream1", 1, None, 2)
e3 = envelope("stream1", 0, None, 3)
e4 = envelope("stream", 0, "123", 4)
STREAM = e1.ssp.system_stream
STREAM1 = e2.ssp.system_stream


@pytest.fixture(params=sorted(BUILDERS))
def build(request: pytest.FixtureRequest) -> Build:
    return BUILDERS[request.param]


def test_start_stop_and_register_reach_every_chooser(build: Build) -> None:
    mock0, mock1 = MockMessageChooser(), MockMessageChooser()
    chooser = build({STREAM: 1}, {1: mock1}, mock0)
    chooser.register(e1.ssp, "foo")
    chooser.start()
    assert mock1.registers[e1.ssp] == "foo"
    assert mock0.registers[e1.ssp] == "foo"
    assert (mock0.starts, mock1.starts) == (1, 1)
    chooser.stop()
    assert (mock0.stops, mock1.stops) == (1, 1)


def test_falls_back_to_default(build: Build) -> None:
    mock = MockMessageChooser()
    chooser = build({}, {}, mock)
    chooser.register(e1.ssp, None)
    chooser.start()
    assert chooser.choose() is None
    chooser.update(e1)
    assert chooser.choose() is e1
    assert chooser.choose() is None


def test_fails_without_default(build: Build) -> None:
    chooser = build({STREAM: 0}, {0: MockMessageChooser()}, None)
    # e2's stream has no priority and there is no default chooser.
    chooser.register(e2.ssp, None)
    chooser.start()
    assert chooser.choose() is None
    with pytest.raises(SamzaError) as info:
        chooser.update(e2)
    assert str(e2.ssp) in str(info.value)


def test_single_stream(build: Build) -> None:
    chooser = build({STREAM: 0}, {0: MockMessageChooser()}, MockMessageChooser())
    chooser.register(e1.ssp, None)
    chooser.start()
    assert chooser.choose() is None
    chooser.update(e1)
    chooser.update(e4)
    assert chooser.choose() is e1
    assert chooser.choose() is e4
    assert chooser.choose() is None
    chooser.update(e4)
    chooser.update(e1)
    assert chooser.choose() is e4
    assert chooser.choose() is e1
    assert chooser.choose() is None


def test_single_stream_with_two_partitions(build: Build) -> None:
    chooser = build({STREAM1: 0}, {0: MockMessageChooser()}, MockMessageChooser())
    chooser.register(e2.ssp, None)
    chooser.register(e3.ssp, None)
    chooser.start()
    assert chooser.choose() is None
    chooser.update(e2)
    chooser.update(e3)
    assert chooser.choose() is e2
    assert chooser.choose() is e3
    assert chooser.choose() is None
    chooser.update(e3)
    chooser.update(e2)
    assert chooser.choose() is e3
    assert chooser.choose() is e2
    assert chooser.choose() is None


def test_two_streams_of_equal_priority(build: Build) -> None:
    chooser = build({STREAM: 0, STREAM1: 0}, {0: MockMessageChooser()}, MockMessageChooser())
    chooser.register(e1.ssp, None)
    chooser.register(e2.ssp, None)
    chooser.start()
    assert chooser.choose() is None
    for first, second in [(e1, e4), (e4, e1), (e2, e4), (e1, e2)]:
        chooser.update(first)
        chooser.update(second)
        assert chooser.choose() is first
        assert chooser.choose() is second
        assert chooser.choose() is None


def test_two_streams_of_different_priority(build: Build) -> None:
    chooser = build(
        {STREAM: 1, STREAM1: 0},
        {0: MockMessageChooser(), 1: MockMessageChooser()},
        MockMessageChooser(),
    )
    chooser.register(e1.ssp, None)
    chooser.register(e2.ssp, None)
    chooser.start()
    assert chooser.choose() is None

    chooser.update(e1)
    chooser.update(e4)
    assert chooser.choose() is e1
    assert chooser.choose() is e4
    assert chooser.choose() is None

    chooser.update(e4)
    chooser.update(e1)
    assert chooser.choose() is e4
    assert chooser.choose() is e1
    assert chooser.choose() is None

    chooser.update(e2)
    chooser.update(e4)
    # Reversed: e4 is of e1's stream, the higher priority.
    assert chooser.choose() is e4
    assert chooser.choose() is e2
    assert chooser.choose() is None

    chooser.update(e1)
    chooser.update(e2)
    assert chooser.choose() is e1
    assert chooser.choose() is e2
    assert chooser.choose() is None

    # Only the low priority stream.
    chooser.update(e2)
    assert chooser.choose() is e2
    assert chooser.choose() is None


def test_default_goes_after_every_tier() -> None:
    chooser = TieredPriorityChooser({STREAM1: -5}, {-5: RoundRobinChooser()}, RoundRobinChooser())
    chooser.update(e1)  # no tier: default
    chooser.update(e2)  # tier -5
    assert chooser.choose() is e2
    assert chooser.choose() is e1


def test_missing_chooser_for_a_priority_is_an_error() -> None:
    with pytest.raises(SamzaError, match="priority 3"):
        TieredPriorityChooser({STREAM: 3}, {0: RoundRobinChooser()})


def test_tier_of() -> None:
    chooser = TieredPriorityChooser({STREAM: 2}, {2: RoundRobinChooser()}, RoundRobinChooser())
    assert chooser.tier_of(e1.ssp) == 2
    assert chooser.tier_of(e2.ssp) is None
    assert chooser.priorities == {STREAM: 2}
