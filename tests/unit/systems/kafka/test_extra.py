"""The Kafka unit tests need the kafka extra (aiokafka); without it they are not collected (see
conftest.py), and this test says why: a skip on a developer machine, a failure under CI=true."""

from __future__ import annotations

from tests.requirements import require


def test_the_kafka_extra_is_installed() -> None:
    require("aiokafka", "the Kafka unit tests need the kafka extra: pip install -e '.[dev,kafka]'")
