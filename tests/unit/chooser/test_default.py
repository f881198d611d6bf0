"""Port of Samza's TestDefaultChooser (batching + priority + bootstrap together) and the layering rules."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.chooser import (
    BatchingChooser,
    BootstrappingChooser,
    DefaultChooser,
    MessageChooser,
    RoundRobinChooser,
    SSPMetadata,
    TieredPriorityChooser,
    TimeAlignedChooser,
)
from samza_nb.config import Config
from samza_nb.errors import SamzaError

from .support import MockMessageChooser, envelope

e1 = envelope("stream", 0, "120", 1)
e2 = envelope("stream1", 1, "121", 2)
e3 = envelope("stream2", 0, "122", 3)
e4 = envelope("stream", 0, "123", 4)
e5 = envelope("stream", 1, "320", 5)
e6 = envelope("stream", 1, "321", 6)
e7 = envelope("stream1", 0, "653", 7)
e8 = envelope("stream3", 0, "654", 8)

METADATA = {
    e1.ssp: SSPMetadata(None, "123", None),
    e5.ssp: SSPMetadata(None, "321", None),
    e8.ssp: SSPMetadata("0", "456", "654"),
}
INT_MAX = 2**31 - 1


def direct() -> DefaultChooser:
    """Samza's construction: mocks per tier, bootstrap streams at Int.MaxValue."""
    return DefaultChooser(
        MockMessageChooser(),
        2,
        {e1.ssp.system_stream: INT_MAX, e8.ssp.system_stream: INT_MAX, e2.ssp.system_stream: 1},
        {INT_MAX: MockMessageChooser(), 1: MockMessageChooser()},
        METADATA,
    )


def from_config() -> DefaultChooser:
    """The same job as configuration: bootstrap streams land one tier above the highest priority (1)."""
    config = Config(
        {
            "task.inputs": "kafka.stream,kafka.stream1,kafka.stream2,kafka.stream3",
            "task.consumer.batch.size": "2",
            "systems.kafka.streams.stream.samza.bootstrap": "true",
            "systems.kafka.streams.stream3.samza.bootstrap": "true",
            "systems.kafka.streams.stream1.samza.priority": "1",
        }
    )
    # Metadata of non-bootstrap partitions is ignored.
    metadata = {**METADATA, e3.ssp: SSPMetadata("0", "999", "1000")}
    return DefaultChooser.from_config(config, metadata)


def traced() -> DefaultChooser:
    chooser = from_config()
    chooser.trace_enabled = True
    return chooser


@pytest.mark.parametrize("build", [direct, from_config, traced], ids=["direct", "from-config", "traced"])
def test_batching_prioritization_and_bootstrapping(build: Callable[[], DefaultChooser]) -> None:
    chooser = build()
    chooser.register(e1.ssp, None)
    chooser.register(e2.ssp, None)
    chooser.register(e3.ssp, None)
    chooser.register(e5.ssp, None)
    # A bootstrap stream that is already caught up must not interfere.
    chooser.register(e8.ssp, "654")
    chooser.start()
    assert chooser.choose() is None

    # A non-bootstrap stream only: still nothing.
    chooser.update(e3)
    assert chooser.choose() is None

    # A bootstrap stream: its envelope goes.
    chooser.update(e1)
    assert chooser.choose() is e1

    # e3 blocked: nothing of e1's bootstrap stream waiting.
    assert chooser.choose() is None

    # e2, higher priority than e3, blocked as well.
    chooser.update(e2)
    assert chooser.choose() is None

    # Batching: e1's partition is preferred over e5's (same stream).
    chooser.update(e5)
    chooser.update(e1)
    assert chooser.choose() is e1

    # Batch size reached: e5 goes even though e1's partition has an envelope again.
    chooser.update(e1)
    assert chooser.choose() is e5
    assert chooser.choose() is e1
    assert chooser.choose() is None

    # Back to e3 and e2 held. e4 catches up e1's partition.
    chooser.update(e4)
    assert chooser.choose() is e4

    # Still blocked: e5's partition has not caught up.
    assert chooser.choose() is None

    # Catch up the second partition.
    chooser.update(e6)
    assert chooser.choose() is e6

    # Nothing bootstraps any more. e2 outranks e3 although e3 came first.
    assert chooser.choose() is e2

    # Still batching: e2's partition preferred over e7 of the same stream.
    chooser.update(e7)
    chooser.update(e2)
    assert chooser.choose() is e2

    # Batch size passed for e2's partition: e7 next.
    chooser.update(e2)
    assert chooser.choose() is e7
    assert chooser.choose() is e2

    # Finally the lowest priority stream.
    assert chooser.choose() is e3
    assert chooser.choose() is None


def test_nothing_configured_is_plain_round_robin() -> None:
    chooser = DefaultChooser.from_config(Config({"task.inputs": "kafka.a,kafka.b"}))
    assert isinstance(chooser.composed, RoundRobinChooser)
    assert (chooser.tiered, chooser.batching, chooser.bootstrapping) == (None, None, None)
    assert chooser.priorities == {}


def test_batch_size_alone_adds_only_batching() -> None:
    chooser = DefaultChooser.from_config(Config({"task.consumer.batch.size": "10"}))
    assert isinstance(chooser.composed, BatchingChooser)
    assert isinstance(chooser.composed.wrapped, RoundRobinChooser)
    assert chooser.composed.batch_size == 10


def test_batch_size_zero_is_off() -> None:
    chooser = DefaultChooser.from_config(Config({"task.consumer.batch.size": "0"}))
    assert isinstance(chooser.composed, RoundRobinChooser)


def test_priority_alone_adds_tiers_with_every_input_at_zero() -> None:
    chooser = DefaultChooser.from_config(
        Config({"task.inputs": "kafka.a,kafka.b,kafka.c", "systems.kafka.streams.b.samza.priority": "5"})
    )
    assert isinstance(chooser.composed, TieredPriorityChooser)
    assert chooser.priorities == {
        SystemStream("kafka", "a"): 0,
        SystemStream("kafka", "b"): 5,
        SystemStream("kafka", "c"): 0,
    }


def test_full_layering_outermost_first() -> None:
    config = Config(
        {
            "task.inputs": "kafka.a,kafka.b",
            "task.consumer.batch.size": "3",
            "systems.kafka.streams.a.samza.bootstrap": "true",
        }
    )
    a0 = envelope("a", 0, "0", "a0")
    chooser = DefaultChooser.from_config(config, {a0.ssp: SSPMetadata("0", "9", "10")})
    layer = chooser.composed
    assert isinstance(layer, BootstrappingChooser) and layer is chooser.bootstrapping
    assert isinstance(layer.wrapped, BatchingChooser) and layer.wrapped is chooser.batching
    assert (
        isinstance(layer.wrapped.wrapped, TieredPriorityChooser) and layer.wrapped.wrapped is chooser.tiered
    )
    # The bootstrap stream outranks the rest; a default chooser catches streams outside the inputs.
    assert chooser.priorities == {SystemStream("kafka", "a"): 1, SystemStream("kafka", "b"): 0}
    assert isinstance(chooser.tiered.default, RoundRobinChooser)  # type: ignore[union-attr]


def test_each_tier_gets_its_own_inner_chooser() -> None:
    made: list[MessageChooser] = []

    def factory() -> MessageChooser:
        made.append(RoundRobinChooser())
        return made[-1]

    config = Config(
        {
            "task.inputs": "kafka.a,kafka.b,kafka.c",
            "systems.kafka.streams.a.samza.priority": "2",
            "systems.kafka.streams.b.samza.priority": "1",
        }
    )
    chooser = DefaultChooser.from_config(config, inner_factory=factory)
    # Tiers 2, 1, 0 and the default: four distinct choosers.
    assert len({id(c) for c in made}) == 4
    assert chooser.tiered is not None and chooser.tiered.default in made


def test_time_aligned_key_makes_tiers_time_aligned() -> None:
    config = Config(
        {
            "task.inputs": "kafka.a,kafka.b,kafka.c",
            "systems.kafka.streams.c.samza.priority": "1",
            "task.chooser.time.aligned": "true",
        }
    )
    chooser = DefaultChooser.from_config(config)
    assert isinstance(chooser.tiered.default, TimeAlignedChooser)  # type: ignore[union-attr]
    late = envelope("a", 0, "0", "late", timestamp=200)
    early = envelope("b", 0, "0", "early", timestamp=100)
    high = envelope("c", 0, "0", "high", timestamp=999)
    chooser.start()
    chooser.update(late)
    chooser.update(early)
    chooser.update(high)
    # Priority first, then event time within the tier.
    assert [chooser.choose(), chooser.choose(), chooser.choose()] == [high, early, late]


def test_explicit_inner_factory_wins_over_the_time_aligned_key() -> None:
    config = Config({"task.chooser.time.aligned": "true"})
    chooser = DefaultChooser.from_config(config, inner_factory=RoundRobinChooser)
    assert isinstance(chooser.composed, RoundRobinChooser)
    assert isinstance(DefaultChooser.from_config(config).composed, TimeAlignedChooser)


def test_bootstrap_streams_need_metadata() -> None:
    config = Config({"task.inputs": "kafka.a", "systems.kafka.streams.a.samza.bootstrap": "true"})
    with pytest.raises(SamzaError, match=r"kafka\.a"):
        DefaultChooser.from_config(config)


def test_bootstrap_stream_without_partition_metadata_is_not_gated() -> None:
    config = Config({"task.inputs": "kafka.a,kafka.b", "systems.kafka.streams.a.samza.bootstrap": "true"})
    chooser = DefaultChooser.from_config(config, {})
    assert chooser.bootstrapping is None
    # Still the highest priority.
    assert chooser.priorities[SystemStream("kafka", "a")] == 1


def test_no_default_and_no_priorities_is_round_robin() -> None:
    chooser = DefaultChooser()
    assert isinstance(chooser.composed, RoundRobinChooser)


def test_caught_up_composition_drops_the_bootstrapping_indirection() -> None:
    a0 = envelope("a", 0, "0", "a0")
    chooser = DefaultChooser(RoundRobinChooser(), None, {}, {}, {a0.ssp: SSPMetadata("0", "0", "1")})
    chooser.register(a0.ssp, "0")
    chooser.start()
    tiered = chooser.tiered
    assert tiered is not None
    assert chooser.choose != tiered.choose
    chooser.update(a0)
    assert chooser.choose() is a0
    # Caught up: the DefaultChooser now calls the tiered layer directly.
    assert chooser.choose == tiered.choose
    assert chooser.update == tiered.update
