"""Port of Samza's TestBatchingChooser, plus the batch-size rules."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from samza_nb.chooser import BatchingChooser, DefaultChooser, MessageChooser, RoundRobinChooser
from samza_nb.errors import ConfigError, SamzaError

from .support import MockMessageChooser, envelope

Build = Callable[[MessageChooser, int], MessageChooser]
BUILDERS: dict[str, Build] = {
    "batching": BatchingChooser,
    # A DefaultChooser with only a batch size behaves like a plain BatchingChooser.
    "default": lambda wrapped, size: DefaultChooser(wrapped, size),
}


@pytest.fixture(params=sorted(BUILDERS))
def build(request: pytest.FixtureRequest) -> Build:
    return BUILDERS[request.param]


def test_batch_size_overrun_and_no_envelope_available(build: Build) -> None:
    e1 = envelope("stream", 0, None, 1)
    e2 = envelope("stream1", 1, None, 2)
    e3 = envelope("stream", 0, None, 3)
    mock = MockMessageChooser()
    chooser = build(mock, 2)

    chooser.register(e1.ssp, None)
    chooser.register(e2.ssp, "")
    chooser.start()
    assert mock.starts == 1
    assert mock.registers == {e1.ssp: None, e2.ssp: ""}
    assert chooser.choose() is None

    chooser.update(e1)
    assert mock.envelopes[0] is e1
    assert chooser.choose() is e1
    assert not mock.envelopes

    chooser.update(e2)
    assert mock.envelopes[0] is e2
    # e3 is of the batched SSP: held by the batching layer, not given to the wrapped chooser.
    chooser.update(e3)
    assert list(mock.envelopes) == [e2]
    # e3 preferred over e2, being of the same SSP as the last choice.
    assert chooser.choose() is e3

    # Batch size 2 reached: the batch reset, so the wrapped chooser decides again.
    chooser.update(e1)
    assert list(mock.envelopes) == [e2, e1]
    assert chooser.choose() is e2
    assert list(mock.envelopes) == [e1]

    # e2's SSP is preferred now but has no envelope: the wrapped chooser decides (e1's SSP).
    assert chooser.choose() is e1
    assert not mock.envelopes

    # e1's SSP is preferred again.
    chooser.update(e2)
    chooser.update(e1)
    assert list(mock.envelopes) == [e2]
    assert chooser.choose() is e1
    chooser.stop()
    assert mock.stops == 1


def test_batches_run_up_to_batch_size_in_a_row() -> None:
    chooser = BatchingChooser(RoundRobinChooser(), 3)
    chooser.start()
    a = [envelope("a", 0, str(i), f"a{i}") for i in range(10)]
    b = [envelope("b", 0, str(i), f"b{i}") for i in range(10)]
    ia, ib = iter(a), iter(b)
    chooser.update(next(ia))
    chooser.update(next(ib))
    order = []
    for _ in range(12):
        chosen = chooser.choose()
        assert chosen is not None
        order.append(chosen.message)
        # The container offers the chosen SSP's next envelope right after the choice.
        chooser.update(next(ia) if chosen.ssp.stream == "a" else next(ib))
    assert order == ["a0", "a1", "a2", "b0", "b1", "b2", "a3", "a4", "a5", "b3", "b4", "b5"]
    assert chooser.batch_resets == 4


def test_batch_of_one_is_plain_delegation() -> None:
    chooser = BatchingChooser(RoundRobinChooser(), 1)
    a0, a1 = envelope("a", 0, "0", "a0"), envelope("a", 0, "1", "a1")
    b0 = envelope("b", 0, "0", "b0")
    chooser.update(a0)
    chooser.update(b0)
    assert chooser.choose() is a0
    chooser.update(a1)
    # No batch of two: b0 arrived before a1, round robin takes it.
    assert chooser.choose() is b0
    assert chooser.choose() is a1


def test_introspection_shows_the_running_batch() -> None:
    chooser = BatchingChooser(RoundRobinChooser(), 5)
    a0, a1 = envelope("a", 0, "0", "a0"), envelope("a", 0, "1", "a1")
    chooser.update(a0)
    assert chooser.choose() is a0
    assert chooser.preferred_ssp == a0.ssp
    assert chooser.batch_count == 1
    chooser.update(a1)
    assert chooser.held_envelope is a1
    assert chooser.choose() is a1
    assert chooser.held_envelope is None
    assert chooser.batch_count == 2


def test_equal_but_distinct_ssp_objects_are_batched() -> None:
    chooser = BatchingChooser(RoundRobinChooser(), 5)
    chooser.update(envelope("a", 0, "0", "a0"))
    chooser.update(envelope("b", 0, "0", "b0"))
    assert chooser.choose().message == "a0"  # type: ignore[union-attr]
    chooser.update(envelope("a", 0, "1", "a1"))  # a new but equal SSP object
    assert chooser.choose().message == "a1"  # type: ignore[union-attr]


@pytest.mark.parametrize("size", [0, -1, -100])
def test_batch_size_must_be_positive(size: int) -> None:
    with pytest.raises(ConfigError) as info:
        BatchingChooser(RoundRobinChooser(), size)
    assert info.value.key == "task.consumer.batch.size"
    assert isinstance(info.value, SamzaError)


def test_default_chooser_rejects_negative_batch_size() -> None:
    with pytest.raises(ConfigError):
        DefaultChooser(RoundRobinChooser(), -2)


def test_stop_drops_the_held_envelope() -> None:
    mock = MockMessageChooser()
    chooser = BatchingChooser(mock, 5)
    a0, a1 = envelope("a", 0, "0", "a0"), envelope("a", 0, "1", "a1")
    chooser.update(a0)
    assert chooser.choose() is a0
    chooser.update(a1)
    chooser.stop()
    assert chooser.held_envelope is None
    assert mock.stops == 1
