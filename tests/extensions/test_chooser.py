"""The weighted round-robin chooser plug-in, loaded through task.chooser.class in a real job."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb import ConfigError, SamzaError
from samza_nb.chooser import MessageChooser
from samza_nb.testing import TestRunner


class Recorder:
    def __init__(self) -> None:
        self.order: list[str] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.order.append(envelope.ssp.stream)


def run(weights: dict[str, str], clicks: int = 6, views: int = 2) -> str:
    recorder = Recorder()
    (
        TestRunner.of(recorder)
        .add_input("clicks", [f"c{i}" for i in range(clicks)])
        .add_input("views", [f"v{i}" for i in range(views)])
        .add_config({"task.chooser.class": "samza_nb_ext.chooser.WeightedRoundRobinChooser", **weights})
        .run(timeout=30)
    )
    return "".join("c" if stream == "clicks" else "v" for stream in recorder.order)


def test_weights_set_how_many_messages_in_a_row_each_stream_gets() -> None:
    assert run({"task.chooser.weights.test.clicks": "3"}) == "cccvcccv"


def test_without_weights_it_is_plain_round_robin_and_drains_the_rest() -> None:
    assert run({}, clicks=4, views=2) == "cvcvcc"


def test_it_is_a_message_chooser() -> None:
    from samza_nb_ext.chooser import WeightedRoundRobinChooser

    assert isinstance(WeightedRoundRobinChooser(), MessageChooser)


def test_a_bad_weight_is_a_config_error_naming_the_key() -> None:
    with pytest.raises(SamzaError) as failure:
        run({"task.chooser.weights.test.clicks": "lots"})
    assert "task.chooser.weights.test.clicks='lots'" in str(failure.value)
    from samza_nb_ext.chooser import WeightedRoundRobinChooser

    with pytest.raises(ConfigError):
        WeightedRoundRobinChooser.from_config({"task.chooser.weights.clicks": "2"})
