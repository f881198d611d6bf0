"""Port of Samza's TestBootstrappingChooser, plus the rules Samza leaves implicit."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.chooser import (
    BootstrappingChooser,
    DefaultChooser,
    MessageChooser,
    RoundRobinChooser,
    SSPMetadata,
)

from .support import MockMessageChooser, envelope

Metadata = Mapping[SystemStreamPartition, SSPMetadata]
Build = Callable[[MessageChooser, Metadata], MessageChooser]
BUILDERS: dict[str, Build] = {
    "bootstrapping": BootstrappingChooser,
    # A DefaultChooser with only bootstrap metadata behaves like a plain BootstrappingChooser.
    "default": lambda wrapped, metadata: DefaultChooser(wrapped, bootstrap_metadata=metadata),
}

e1 = envelope("stream", 0, "120", 1)
e2 = envelope("stream1", 1, "121", 2)
e3 = envelope("stream1", 0, "122", 3)
e4 = envelope("stream", 0, "123", 4)
e5 = envelope("stream1", 1, "124", 5)
e6 = envelope("stream1", 1, "125", 6)
e7 = envelope("stream1", 0, "124", 7)
e8 = envelope("stream1", 0, "125", 8)


def metadata_of(env: IncomingMessageEnvelope, newest: str, upcoming: str | None = None) -> Metadata:
    return {env.ssp: SSPMetadata(None, newest, upcoming)}


@pytest.fixture(params=sorted(BUILDERS))
def build(request: pytest.FixtureRequest) -> Build:
    return BUILDERS[request.param]


def test_ignores_streams_that_are_not_in_the_metadata(build: Build) -> None:
    mock = MockMessageChooser()
    chooser = build(mock, {})
    chooser.register(e1.ssp, "foo")
    chooser.start()
    assert mock.starts == 1
    assert mock.registers[e1.ssp] == "foo"
    chooser.update(e1)
    assert chooser.choose() is e1
    assert chooser.choose() is None
    chooser.stop()
    assert mock.stops == 1


def test_eliminates_caught_up_streams_on_register(build: Build) -> None:
    mock = MockMessageChooser()
    chooser = build(mock, metadata_of(e1, "100", "123"))
    # Registered at 123 = upcoming: caught up, so other streams are not held back.
    chooser.register(e1.ssp, "123")
    chooser.register(e2.ssp, "321")
    chooser.start()
    chooser.update(e2)
    assert chooser.choose() is e2
    assert chooser.choose() is None


def test_eliminates_caught_up_streams_after_register(build: Build) -> None:
    mock = MockMessageChooser()
    chooser = build(mock, metadata_of(e1, "123"))
    chooser.register(e1.ssp, "1")
    chooser.register(e2.ssp, None)
    chooser.start()
    chooser.update(e2)
    # Blocked until the lagging bootstrap SSP has an envelope waiting.
    assert chooser.choose() is None
    chooser.update(e1)
    assert chooser.choose() is e2
    assert chooser.choose() is e1
    # Nothing of e1's SSP waiting: blocked again.
    chooser.update(e2)
    assert chooser.choose() is None
    # e4 carries the newest offset (123): after it is chosen, e1's SSP is caught up.
    chooser.update(e4)
    assert chooser.choose() is e2
    assert chooser.choose() is e4
    assert chooser.choose() is None
    # No lagging bootstrap streams any more: nothing blocks.
    chooser.update(e2)
    assert chooser.choose() is e2
    assert chooser.choose() is None
    chooser.update(e2)
    assert chooser.choose() is e2
    assert chooser.choose() is None


def test_two_bootstrap_streams(build: Build) -> None:
    mock = MockMessageChooser()
    chooser = build(mock, {**metadata_of(e1, "123"), **metadata_of(e2, "321")})
    chooser.register(e1.ssp, "1")
    chooser.register(e2.ssp, "1")
    chooser.register(e3.ssp, "1")
    chooser.start()
    chooser.update(e1)
    assert chooser.choose() is None
    chooser.update(e3)
    assert chooser.choose() is None
    chooser.update(e2)

    # Fully loaded now.
    assert chooser.choose() is e1
    # e1's SSP is missing again.
    assert chooser.choose() is None
    chooser.update(e1)
    assert chooser.choose() is e3
    # e3's SSP is not a bootstrap partition, so e2 can still go.
    assert chooser.choose() is e2
    # e2's SSP needs an envelope now.
    assert chooser.choose() is None
    chooser.update(e2)
    assert chooser.choose() is e1
    assert chooser.choose() is None
    # e4 catches up e1's SSP once chosen.
    chooser.update(e4)
    chooser.update(e3)
    assert chooser.choose() is e2
    assert chooser.choose() is None
    chooser.update(e2)
    assert chooser.choose() is e4
    # Allowed without an envelope of e1's SSP: e4 caught it up; e2's SSP has one waiting.
    assert chooser.choose() is e3
    assert chooser.choose() is e2
    assert chooser.choose() is None


def test_lagging_partitions_are_the_registered_ones() -> None:
    chooser = BootstrappingChooser(MockMessageChooser(), {**metadata_of(e1, "123"), **metadata_of(e2, "321")})
    chooser.register(e1.ssp, "1")
    chooser.register(e2.ssp, "1")
    chooser.start()
    assert chooser.lagging_ssps == {e1.ssp, e2.ssp}
    assert chooser.lag_counts == {e1.ssp.system_stream: 1, e2.ssp.system_stream: 1}


def test_no_lagging_partitions_after_catching_up() -> None:
    metadata = {e3.ssp: SSPMetadata(None, "123", None), e2.ssp: SSPMetadata(None, "123", None)}
    chooser = BootstrappingChooser(MockMessageChooser(), metadata)
    chooser.register(e2.ssp, "1")
    chooser.register(e3.ssp, "1")
    chooser.start()
    stream1 = e2.ssp.system_stream
    assert chooser.lag_counts == {stream1: 2}

    assert chooser.choose() is None
    chooser.update(e5)  # 124 >= 123: e5's SSP is caught up once chosen
    assert chooser.choose() is e5
    assert chooser.lag_counts == {stream1: 1}

    chooser.update(e6)
    # Nothing more of the caught-up SSP until the lagging partition has an envelope.
    assert chooser.choose() is None
    chooser.update(e3)
    assert chooser.choose() is e6
    assert chooser.choose() is e3
    assert chooser.lag_counts == {stream1: 1}

    chooser.update(e7)
    assert chooser.choose() is e7
    assert not chooser.lagging_ssps
    assert chooser.lag_counts == {}
    chooser.update(e8)
    assert chooser.choose() is e8


def test_ssp_registered_several_times_starts_at_its_lowest_offset() -> None:
    chooser = BootstrappingChooser(
        MockMessageChooser(), {**metadata_of(e1, "123", "124"), **metadata_of(e2, "321", "322")}
    )
    # Shared by several tasks (bootstrap + broadcast), each with its own offset.
    for ssp in (e1.ssp, e2.ssp):
        chooser.register(ssp, "1")
        chooser.register(ssp, "2")
        chooser.register(ssp, None)
    chooser.register(e1.ssp, "124")  # one task is caught up, but the lowest offset (1) counts
    chooser.start()
    assert chooser.lagging_ssps == {e1.ssp, e2.ssp}
    assert chooser.lag_counts == {e1.ssp.system_stream: 1, e2.ssp.system_stream: 1}


def test_unregistered_bootstrap_partitions_are_dropped_at_start() -> None:
    metadata = {e1.ssp: SSPMetadata("0", "200", "201"), e5.ssp: SSPMetadata("0", "200", "201")}
    chooser = BootstrappingChooser(RoundRobinChooser(), metadata)
    chooser.register(e1.ssp, "0")  # e5's SSP is never registered
    assert chooser.lagging_ssps == {e1.ssp, e5.ssp}
    chooser.start()
    assert chooser.lagging_ssps == {e1.ssp}
    chooser.update(e1)
    assert chooser.choose() is e1  # no envelope of e5's stream needed


def test_empty_partitions_are_caught_up_at_start() -> None:
    chooser = BootstrappingChooser(RoundRobinChooser(), {e1.ssp: SSPMetadata(None, None, "0")})
    chooser.register(e1.ssp, None)
    chooser.register(e2.ssp, None)
    chooser.start()
    assert not chooser.is_bootstrapping
    chooser.update(e2)
    assert chooser.choose() is e2


def test_end_of_stream_catches_up() -> None:
    chooser = BootstrappingChooser(RoundRobinChooser(), {e1.ssp: SSPMetadata("0", "500", "501")})
    chooser.register(e1.ssp, "0")
    chooser.register(e2.ssp, "0")
    chooser.start()
    chooser.update(e2)
    eos = IncomingMessageEnvelope.end_of_stream(e1.ssp)
    chooser.update(eos)
    assert chooser.choose() is e2
    assert chooser.choose() is eos
    assert not chooser.is_bootstrapping


def test_registered_without_offset_stays_lagging() -> None:
    chooser = BootstrappingChooser(RoundRobinChooser(), {e1.ssp: SSPMetadata("0", "5", "6")})
    chooser.register(e1.ssp, None)
    chooser.start()
    assert chooser.lagging_ssps == {e1.ssp}


def test_offsets_the_comparator_cannot_compare_do_not_catch_up() -> None:
    chooser = BootstrappingChooser(RoundRobinChooser(), {e1.ssp: SSPMetadata("0", "5", "6")})
    chooser.register(e1.ssp, "not-a-number")
    chooser.start()
    assert chooser.is_bootstrapping
    bad = IncomingMessageEnvelope(e1.ssp, "also-not-a-number", None, "x")
    chooser.update(bad)
    assert chooser.choose() is bad
    assert chooser.is_bootstrapping


def test_offsets_compare_with_the_given_comparator() -> None:
    def by_text(a: str, b: str) -> int:
        return (a > b) - (a < b)

    # As text "9" >= "10"; as integers it is not.
    metadata = {e1.ssp: SSPMetadata("0", "10", "11")}
    as_text = BootstrappingChooser(RoundRobinChooser(), metadata, by_text)
    as_ints = BootstrappingChooser(RoundRobinChooser(), metadata)
    for chooser in (as_text, as_ints):
        chooser.register(e1.ssp, "0")
        chooser.start()
        chooser.update(IncomingMessageEnvelope(e1.ssp, "9", None, "x"))
        assert chooser.choose() is not None
    assert not as_text.is_bootstrapping
    assert as_ints.is_bootstrapping


def test_becomes_a_pass_through_and_tells_listeners_once() -> None:
    wrapped = RoundRobinChooser()
    chooser = BootstrappingChooser(wrapped, {e1.ssp: SSPMetadata("0", "123", "124")})
    calls: list[str] = []
    chooser.on_caught_up(lambda: calls.append("done"))
    chooser.register(e1.ssp, "0")
    chooser.start()
    assert chooser.choose != wrapped.choose
    chooser.update(e4)
    assert chooser.choose() is e4
    assert calls == ["done"]
    assert chooser.update == wrapped.update
    assert chooser.choose == wrapped.choose
    # A listener added after catching up is called at once.
    chooser.on_caught_up(lambda: calls.append("late"))
    assert calls == ["done", "late"]


def test_no_lagging_partitions_is_a_pass_through_from_start() -> None:
    wrapped = RoundRobinChooser()
    chooser = BootstrappingChooser(wrapped, {})
    chooser.start()
    assert chooser.choose == wrapped.choose
    assert chooser.update == wrapped.update
