"""The Kafka benchmarks at a tiny size against the session's broker: each runs to its end and its output
checks run (benchmarks/output_check.py)."""

from __future__ import annotations

from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.benchmark_scripts import benchmark, checks

__all__ = ["checks"]  # the fixture, imported to be used here


def tiny(broker: DevBroker) -> list[str]:
    return ["--bootstrap", broker.bootstrap_servers, "--messages", "300", "--partitions", "2", "--runs", "1"]


def test_kafka(kafka_broker: DevBroker, checks: list[str]) -> None:
    assert benchmark("kafka").main(tiny(kafka_broker)) == 0
    assert checks == ["raw aiokafka: messages consumed", "container: messages processed"]


def test_kafka_passthrough(kafka_broker: DevBroker, checks: list[str]) -> None:
    assert benchmark("kafka_passthrough").main(tiny(kafka_broker)) == 0
    copied = [c for c in checks if c.endswith("the output topic, partition by partition")]
    assert len(copied) == 6, checks  # every contender
