"""Port of Samza's TestRoundRobinChooser, run against every chooser that must reduce to round robin."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from samza_nb.chooser import (
    DefaultChooser,
    MessageChooser,
    RoundRobinChooser,
    TimeAlignedChooser,
)
from samza_nb.config import Config

from .support import envelope

FACTORIES: dict[str, Callable[[], MessageChooser]] = {
    "round-robin": RoundRobinChooser,
    "default": DefaultChooser,
    "default-from-empty-config": lambda: DefaultChooser.from_config(Config({})),
    "default-from-inputs-only": lambda: DefaultChooser.from_config(
        Config({"task.inputs": "kafka.stream,kafka.stream1"})
    ),
    # Without timestamps the time-aligned chooser is exactly FIFO.
    "time-aligned-untimestamped": TimeAlignedChooser,
}


@pytest.fixture(params=sorted(FACTORIES))
def chooser(request: pytest.FixtureRequest) -> MessageChooser:
    return FACTORIES[request.param]()


def test_round_robin_scenario(chooser: MessageChooser) -> None:
    e1 = envelope("stream", 0, None, 1)
    e2 = envelope("stream", 1, None, 2)
    e3 = envelope("stream1", 0, None, 3)

    chooser.register(e1.ssp, None)
    chooser.register(e2.ssp, "")
    chooser.register(e3.ssp, "123")
    chooser.start()

    assert chooser.choose() is None

    # One message.
    chooser.update(e1)
    assert chooser.choose() is e1
    assert chooser.choose() is None

    # Simple ordering.
    chooser.update(e1)
    chooser.update(e2)
    chooser.update(e3)
    assert chooser.choose() is e1
    assert chooser.choose() is e2
    assert chooser.choose() is e3
    assert chooser.choose() is None

    # Mixed ordering.
    chooser.update(e2)
    chooser.update(e1)
    assert chooser.choose() is e2
    assert chooser.choose() is e1

    chooser.update(e1)
    chooser.update(e2)
    assert chooser.choose() is e1
    assert chooser.choose() is e2
    assert chooser.choose() is None

    # Simple ordering with a different first envelope.
    chooser.update(e2)
    chooser.update(e1)
    chooser.update(e3)
    assert chooser.choose() is e2
    assert chooser.choose() is e1
    assert chooser.choose() is e3
    assert chooser.choose() is None
    chooser.stop()


def test_every_chooser_satisfies_the_protocol(chooser: MessageChooser) -> None:
    assert isinstance(chooser, MessageChooser)


def test_stop_drops_held_envelopes() -> None:
    chooser = RoundRobinChooser()
    chooser.update(envelope("stream", 0, "1", 1))
    chooser.stop()
    assert chooser.choose() is None
