"""Browsing a stream through its system's admin and consumer (:mod:`samza_nb.systems.browse`), here over the
in-memory system: Python objects shown as they are, a bounded stream's end-of-stream ends the read, and the
read never waits for messages yet to come."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import pytest

from samza_nb.api.streams import SystemStream
from samza_nb.config import Config
from samza_nb.systems.browse import BrowseError, browse, message_row
from samza_nb.systems.inmemory.system import InMemoryBroker, InMemorySystemFactory

FACTORY = "samza_nb.systems.inmemory.InMemorySystemFactory"


@pytest.fixture
def system() -> Iterator[tuple[InMemoryBroker, Config]]:
    namespace = f"t-{uuid.uuid4().hex}"
    config = Config({"systems.mem.inmemory.namespace": namespace, "systems.mem.samza.factory": FACTORY})
    yield InMemorySystemFactory.broker("mem", config), config
    InMemoryBroker.drop(namespace)


def test_objects_by_partition_and_key(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s", 2)
    for i in range(5):
        broker.send("s", {"n": i}, key=("user", i % 2), partition=i % 2)
    broker.end_stream("s")
    result = asyncio.run(browse(config, SystemStream("mem", "s"), key="('user', 1)"))
    assert [(m.partition, m.offset, m.value) for m in result.messages] == [
        (1, "0", {"n": 1}),
        (1, "1", {"n": 3}),
    ]
    assert message_row(result.messages[0])[:5] == ("1", "0", "('user', 1)", "{'n': 1}", "—")


def test_a_live_stream_is_read_to_its_newest_message_without_waiting(
    system: tuple[InMemoryBroker, Config],
) -> None:
    broker, config = system
    broker.create_stream("live", 1)
    for i in range(3):
        broker.send("live", i)
    started = time.monotonic()
    idle_s = 30.0
    result = asyncio.run(browse(config, SystemStream("mem", "live"), idle_s=idle_s))
    assert [m.value for m in result.messages] == [0, 1, 2] and result.notes == ()
    elapsed = time.monotonic() - started
    assert elapsed < idle_s / 2, "the read ended at the newest message, not at the idle limit"
    empty = asyncio.run(browse(config, SystemStream("mem", "live"), start="3"))
    assert empty.messages == () and empty.notes == (
        "partition 0: no message at offset 3 yet (mem.live#0 has offsets 0..2)",
    )
    with pytest.raises(BrowseError, match=r"^mem.nope: "):
        asyncio.run(browse(config, SystemStream("mem", "nope")))
