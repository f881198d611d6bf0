"""A container refuses a broadcast partition that several of its tasks would read (its run loop delivers a
partition to one task) with a clear ConfigError, instead of feeding only one of them."""

from __future__ import annotations

import pytest

from samza_nb.errors import SamzaError
from samza_nb.testing import TestRunner


class Echo:
    def process(self, envelope: object, collector: object, coordinator: object) -> None:
        pass


def test_a_shared_broadcast_partition_is_refused() -> None:
    runner = (
        TestRunner.of(Echo)
        .add_input("in", {0: [1], 1: [2], 2: [3]})
        .add_config({"task.broadcast.inputs": "test.in#0"})
    )
    with pytest.raises(
        SamzaError, match=r"task.broadcast.inputs: .*read by tasks 'Partition 1' and 'Partition 2'"
    ):
        runner.run(timeout=10)
