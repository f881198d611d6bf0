"""CoordinatorStreamStore on the in-memory system (the Kafka twin is in tests/integration/kafka)."""

from __future__ import annotations

import asyncio
import uuid

import pytest

from samza_nb import Config
from samza_nb.coordinator import CoordinatorStreamMessage, CoordinatorStreamStore, coordinator_stream_name
from samza_nb.coordinator.messages import SET_CHANGELOG, SET_CONFIG
from samza_nb.coordinator.stream_store import coordinator_system
from samza_nb.errors import SamzaError
from samza_nb.systems.inmemory.system import InMemoryBroker

Msg = CoordinatorStreamMessage
INMEMORY = "samza_nb.systems.inmemory.InMemorySystemFactory"


@pytest.fixture
def config() -> Config:
    namespace = f"coord-{uuid.uuid4().hex[:8]}"
    return Config(
        {
            "job.name": "page_views",
            "job.id": "a_1",
            "job.coordinator.system": "mem",
            "systems.mem.samza.factory": INMEMORY,
            "systems.mem.inmemory.namespace": namespace,
        }
    )


def broker_of(config: Config) -> InMemoryBroker:
    return InMemoryBroker.named(config["systems.mem.inmemory.namespace"], "mem")


async def started(config: Config) -> CoordinatorStreamStore:
    store = CoordinatorStreamStore(config)
    await store.start()
    return store


def test_the_stream_name_follows_samza() -> None:
    assert coordinator_stream_name("page_views") == "__samza_coordinator_page-views_1"
    assert coordinator_stream_name("page_views", "a_1") == "__samza_coordinator_page-views_a-1"


def test_the_system_is_the_coordinator_system_else_the_default_system_else_the_log() -> None:
    assert coordinator_system({"job.coordinator.system": "kafka", "job.default.system": "mem"}) == "kafka"
    assert coordinator_system({"job.default.system": "mem"}) == "mem"
    assert coordinator_system({}) == "log"


def test_start_creates_a_one_partition_stream_and_messages_survive_the_store(config: Config) -> None:
    stream = "__samza_coordinator_page-views_a-1"

    async def scenario() -> CoordinatorStreamStore:
        first = await started(config)
        assert first.bootstrapped() == [] and first.config() == {}
        await first.send(
            [
                Msg.set_config("job.name", "page_views", "test"),
                Msg.set_config("task.inputs", "mem.in", "test"),
                Msg.set_changelog("Partition 0", 0, "test"),
                Msg.set_changelog("Partition 10", 1, "test"),
                Msg.set_container_host("0", "alpha", "test"),
                Msg.set_task_container("Partition 10", "0", "test"),
            ]
        )
        assert first.config() == {"job.name": "page_views", "task.inputs": "mem.in"}
        await first.stop()
        return await started(config)

    second = asyncio.run(scenario())
    assert broker_of(config).partition_count(stream) == 1
    assert second.config() == {"job.name": "page_views", "task.inputs": "mem.in"}
    assert second.changelog_mapping() == {"Partition 0": 0, "Partition 10": 1}
    assert second.container_hosts() == {"0": "alpha"}
    assert second.task_containers() == {"Partition 10": "0"}
    assert [m.key for m in second.bootstrapped(SET_CHANGELOG)] == ["Partition 0", "Partition 10"]
    asyncio.run(second.stop())


def test_messages_arrive_byte_exact(config: Config) -> None:
    messages = [Msg.set_config("clé", "värde", "test"), Msg.delete(SET_CONFIG, "clé", "test")]

    async def scenario() -> None:
        store = await started(config)
        await store.send(messages)
        await store.stop()

    asyncio.run(scenario())
    stream = coordinator_stream_name("page_views", "a_1")
    envelopes, _ = broker_of(config).envelopes(CoordinatorStreamStore(config).ssp, 0)
    assert [(e.key, e.message) for e in envelopes] == [m.encode() for m in messages]
    assert broker_of(config).read(stream)[0][1] is None


def test_bootstrap_order_and_deletes_through_the_stream(config: Config) -> None:
    async def scenario() -> CoordinatorStreamStore:
        store = await started(config)
        await store.send([Msg.set_config("key1", "value1", "s"), Msg.set_config("key1", "value2", "s")])
        await store.send([Msg.set_config("key1", "value1", "s"), Msg.set_config("gone", "x", "s")])
        await store.send([Msg.delete(SET_CONFIG, "gone", "s")])
        await store.stop()
        return await started(config)

    store = asyncio.run(scenario())
    assert [m.value("value") for m in store.bootstrapped(SET_CONFIG)] == ["value2", "value1"]
    assert store.config() == {"key1": "value1"}
    asyncio.run(store.stop())


def test_catch_up_reads_what_others_wrote_since(config: Config) -> None:
    async def scenario() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
        reader = await started(config)
        writer = await started(config)
        await writer.send([Msg.set_config("job.container.count", "2", "writer")])
        before = reader.config()
        await reader.catch_up()
        after = reader.config()
        await writer.send([Msg.set_config("job.container.count", "3", "writer")])
        await reader.send([Msg.set_config("own", "1", "reader")])
        await reader.catch_up()
        last = reader.config()
        await reader.stop()
        await writer.stop()
        return before, after, last

    before, after, last = asyncio.run(scenario())
    assert before == {}
    assert after == {"job.container.count": "2"}
    assert last == {"job.container.count": "3", "own": "1"}


def test_a_malformed_message_names_the_stream_and_offset(config: Config) -> None:
    stream = coordinator_stream_name("page_views", "a_1")
    broker = broker_of(config)
    broker.create_stream(stream, 1)
    broker.send(
        stream, Msg.set_config("a", "1", "s").encode()[1], key=Msg.set_config("a", "1", "s").encode()[0]
    )
    broker.send(stream, b"{}", key=b"not json")
    with pytest.raises(SamzaError, match=rf"coordinator stream mem\.{stream} offset 1: the key b'not json'"):
        asyncio.run(CoordinatorStreamStore(config).start())


def test_a_message_that_is_no_bytes_is_named(config: Config) -> None:
    stream = coordinator_stream_name("page_views", "a_1")
    broker_of(config).create_stream(stream, 1)
    broker_of(config).send(stream, {"values": {}}, key=b'[1,"set-config","a"]')
    with pytest.raises(SamzaError, match="offset 0: the value is a dict"):
        asyncio.run(CoordinatorStreamStore(config).start())


def test_a_stream_with_several_partitions_is_refused(config: Config) -> None:
    stream = coordinator_stream_name("page_views", "a_1")
    broker_of(config).create_stream(stream, 2)
    with pytest.raises(SamzaError, match=r"page-views_a-1.*(2 partitions|has 2)"):
        asyncio.run(CoordinatorStreamStore(config).start())


def test_use_out_of_order_is_an_error(config: Config) -> None:
    async def scenario() -> None:
        store = CoordinatorStreamStore(config)
        with pytest.raises(SamzaError, match="start it first"):
            await store.send([Msg.set_config("a", "1", "s")])
        await store.start()
        with pytest.raises(SamzaError, match="already started"):
            await store.start()
        await store.stop()
        await store.stop()
        with pytest.raises(SamzaError, match="stopped"):
            await store.catch_up()

    asyncio.run(scenario())
