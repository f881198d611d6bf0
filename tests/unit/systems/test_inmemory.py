"""The in-memory system: offsets, metadata, end-of-stream, polling and producing."""

from __future__ import annotations

import asyncio
import threading
import uuid
from typing import Any

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SamzaError, SystemStream, SystemStreamPartition
from samza_nb.api.metadata import SSPMetadata
from samza_nb.api.streams import NO_HEADERS
from samza_nb.errors import SystemProducerError
from samza_nb.systems.inmemory.system import InMemoryBroker, InMemorySystemFactory, stable_partition
from samza_nb.testing import Message, TestRunner


@pytest.fixture
def system() -> tuple[InMemoryBroker, Config]:
    namespace = f"t-{uuid.uuid4().hex}"
    config = Config({"systems.mem.inmemory.namespace": namespace})
    return InMemorySystemFactory.broker("mem", config), config


def test_offsets_count_per_partition_and_metadata_follows(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s", 2)
    assert [broker.send("s", v, partition=0) for v in "abc"] == ["0", "1", "2"]
    assert broker.send("s", "x", partition=1) == "0"
    admin = InMemorySystemFactory().get_admin("mem", config)
    metadata = asyncio.run(admin.get_metadata(["s"]))
    assert metadata == {"s": {0: SSPMetadata("0", "2", "3"), 1: SSPMetadata("0", "0", "1")}}
    assert admin.offset_comparator("2", "10") < 0 and admin.offset_after("9") == "10"


def test_an_empty_partition_has_no_oldest_or_newest(system: tuple[InMemoryBroker, Config]) -> None:
    broker, _ = system
    broker.create_stream("s")
    assert broker.metadata("s") == {0: SSPMetadata(None, None, "0")}


def test_poll_returns_everything_available_then_end_of_stream(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s")
    ssp = SystemStreamPartition("mem", "s", 0)
    for v in range(1500):
        broker.send("s", v)
    consumer = InMemorySystemFactory().get_consumer("mem", config)
    consumer.register(ssp, "1000")

    async def scenario() -> list[list[str]]:
        await consumer.start()
        first = await consumer.poll([ssp], 0)
        broker.end_stream("s")
        second = await consumer.poll([ssp], 0)
        third = await consumer.poll([ssp], 0)
        return [[e.offset for e in batch.get(ssp, [])] for batch in (first, second, third)]

    first, second, third = asyncio.run(scenario())
    assert first == [str(i) for i in range(1000, 1500)]
    assert second == ["END_OF_STREAM"] and third == []


def test_poll_waits_for_a_write_from_another_thread(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s")
    ssp = SystemStreamPartition("mem", "s", 0)
    consumer = InMemorySystemFactory().get_consumer("mem", config)
    consumer.register(ssp, "0")

    async def scenario() -> list[str]:
        await consumer.start()
        threading.Timer(0.05, lambda: broker.send("s", "late")).start()
        batch = await consumer.poll([ssp], 5.0)
        return [e.message for e in batch[ssp]]

    assert asyncio.run(asyncio.wait_for(scenario(), 3)) == ["late"]


def test_poll_times_out_empty(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s")
    ssp = SystemStreamPartition("mem", "s", 0)
    consumer = InMemorySystemFactory().get_consumer("mem", config)
    consumer.register(ssp, "0")

    async def scenario() -> object:
        await consumer.start()
        return await consumer.poll([ssp], 0.02)

    assert asyncio.run(scenario()) == {}


def test_errors_name_the_stream_partition_and_offset(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s", 2)
    with pytest.raises(SamzaError, match="no stream 'nope'"):
        broker.send("nope", 1)
    with pytest.raises(SystemProducerError, match="partition 5 does not exist"):
        broker.send("s", 1, partition=5)
    with pytest.raises(SamzaError, match="exists with 2 partitions"):
        broker.ensure_stream("s", 3)  # create_stream would make it anew
    consumer = InMemorySystemFactory().get_consumer("mem", config)
    with pytest.raises(SamzaError, match="not an in-memory offset"):
        consumer.register(SystemStreamPartition("mem", "s", 0), "abc")
    broker.end_stream("s")
    with pytest.raises(SystemProducerError, match="has ended"):
        broker.send("s", 1, partition=0)


def test_producer_creates_streams_and_partitions_by_key(system: tuple[InMemoryBroker, Config]) -> None:
    broker, _ = system
    config = Config(
        {
            "systems.mem.inmemory.namespace": broker.namespace,
            "systems.mem.streams.out.partitions": "4",
        }
    )
    producer = InMemorySystemFactory().get_producer("mem", config)
    out = SystemStream("mem", "out")
    for word in ["a", "b", "a", "c"]:
        producer.send("task", OutgoingMessageEnvelope(out, word, key=word))
    producer.send("task", OutgoingMessageEnvelope(out, "p2", partition=2))
    contents = broker.read("out")
    assert len(contents) == 4
    assert contents[stable_partition("a", 4)].count("a") == 2
    assert "p2" in contents[2]


def test_stable_partition_is_stable_and_spreads() -> None:
    assert stable_partition("apple", 8) == stable_partition("apple", 8)
    assert stable_partition(10, 4) == 2
    assert len({stable_partition(f"key-{i}", 8) for i in range(100)}) == 8


def test_a_namespace_created_for_another_system_is_a_clear_error() -> None:
    namespace = f"t-{uuid.uuid4().hex}"
    InMemoryBroker.named(namespace).create_stream("s")
    config = Config({"systems.mem.inmemory.namespace": namespace})
    with pytest.raises(SamzaError, match=r"InMemoryBroker\.named"):
        InMemorySystemFactory.broker("mem", config)


def _sends(stream: str) -> list[OutgoingMessageEnvelope]:
    out = SystemStream("mem", stream)
    return [
        OutgoingMessageEnvelope(out, "p1", partition=1),
        OutgoingMessageEnvelope(out, "k", key="user-7"),
        OutgoingMessageEnvelope(out, "pk", key="x", partition_key=12),
        OutgoingMessageEnvelope(out, "rr1"),
        OutgoingMessageEnvelope(out, "rr2"),
        OutgoingMessageEnvelope(out, 5, key=5),
        OutgoingMessageEnvelope(SystemStream("mem", f"{stream}-other"), "elsewhere"),
        OutgoingMessageEnvelope(out, "rr3"),
    ]


@pytest.mark.parametrize("partitions", [1, 3])
def test_a_batch_lands_where_the_same_sends_one_by_one_land(
    system: tuple[InMemoryBroker, Config], partitions: int
) -> None:
    broker, _ = system
    config = Config(
        {
            "systems.mem.inmemory.namespace": broker.namespace,
            "systems.mem.streams.one.partitions": str(partitions),
            "systems.mem.streams.many.partitions": str(partitions),
        }
    )
    producer = InMemorySystemFactory().get_producer("mem", config)
    sends = [e for e in _sends("one") if partitions > 1 or e.partition is None]
    for envelope in sends:
        producer.send("task", envelope)
    producer.send_batch(
        [
            OutgoingMessageEnvelope(
                SystemStream("mem", "many"), e.message, e.key, e.partition_key, e.partition
            )
            if e.system_stream.stream == "one"
            else OutgoingMessageEnvelope(SystemStream("mem", "many-other"), e.message)
            for e in sends
        ],
    )
    assert broker.read("many") == broker.read("one")
    assert broker.read("many-other") == broker.read("one-other") == {0: ["elsewhere"]}
    # Offsets are assigned per partition, in order.
    envelopes, _ = broker.envelopes(SystemStreamPartition("mem", "many", 0), 0)
    assert [e.offset for e in envelopes] == [str(i) for i in range(len(envelopes))]


def test_a_batch_that_cannot_land_appends_nothing(system: tuple[InMemoryBroker, Config]) -> None:
    broker, _ = system
    broker.create_stream("s", 2)
    broker.create_stream("single", 1)
    out, single = SystemStream("mem", "s"), SystemStream("mem", "single")
    ok = [OutgoingMessageEnvelope(single, "fine")]
    with pytest.raises(SystemProducerError, match="partition 5 does not exist"):
        broker.send_many({"single": ok, "s": [OutgoingMessageEnvelope(out, 1, partition=5)]})
    with pytest.raises(SystemProducerError, match="partition 1 does not exist"):
        broker.send_many({"single": [*ok, OutgoingMessageEnvelope(single, 2, partition=1)]})
    broker.end_stream("s", [1])
    with pytest.raises(SystemProducerError, match="has ended"):
        broker.send_many({"single": ok, "s": [OutgoingMessageEnvelope(out, 1, partition=1)]})
    assert broker.read("s") == {0: [], 1: []}
    assert broker.read("single") == {0: []}


def test_event_time_travels_with_the_message(system: tuple[InMemoryBroker, Config]) -> None:
    """An envelope's timestamp reaches the consumer, sent one by one or in a batch; None stays None."""
    _, config = system
    producer = InMemorySystemFactory().get_producer("mem", config)
    one, batch = SystemStream("mem", "one"), SystemStream("mem", "batch")
    producer.send("task", OutgoingMessageEnvelope(one, "a", timestamp=1_700_000_000_123))
    producer.send("task", OutgoingMessageEnvelope(one, "b"))
    producer.send_batch(
        [
            OutgoingMessageEnvelope(batch, "a", timestamp=5),
            OutgoingMessageEnvelope(batch, "b"),
            OutgoingMessageEnvelope(batch, "c", key="k", timestamp=7),
        ]
    )
    consumer = InMemorySystemFactory().get_consumer("mem", config)
    ssps = [SystemStreamPartition("mem", "one", 0), SystemStreamPartition("mem", "batch", 0)]
    for ssp in ssps:
        consumer.register(ssp, "0")

    async def read() -> dict[SystemStreamPartition, list[tuple[object, int | None]]]:
        await consumer.start()
        try:
            polled = await consumer.poll(set(ssps), 1.0)
        finally:
            await consumer.stop()
        return {ssp: [(e.message, e.timestamp) for e in envelopes] for ssp, envelopes in polled.items()}

    got = asyncio.run(read())
    assert got[ssps[0]] == [("a", 1_700_000_000_123), ("b", None)]
    assert got[ssps[1]] == [("a", 5), ("b", None), ("c", 7)]


HEADERS = (("trace", b"t1"), ("trace", b"t2"), ("null", None))


def _headers_read(config: Config, ssp: SystemStreamPartition) -> list[tuple[str, object]]:
    consumer = InMemorySystemFactory().get_consumer("mem", config)
    consumer.register(ssp, "0")

    async def scenario() -> list[tuple[str, object]]:
        await consumer.start()
        batch = (await consumer.poll([ssp], 0)).get(ssp, [])
        return [(e.message, e.headers) for e in batch if not e.is_end_of_stream]

    return asyncio.run(scenario())


def test_headers_travel_with_single_and_batched_sends(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s", 2)
    broker.send("s", "one", partition=0, headers=HEADERS)
    broker.send("s", "two", partition=0)
    producer = InMemorySystemFactory().get_producer("mem", config)
    stream = SystemStream("mem", "s")
    producer.send_batch(
        [
            OutgoingMessageEnvelope(stream, "b0", partition=0),
            OutgoingMessageEnvelope(stream, "b1", partition=1, headers=(("p", b"1"),)),
            OutgoingMessageEnvelope(stream, "b2", partition=0, headers=(("k", bytearray(b"v")),)),
            OutgoingMessageEnvelope(stream, "b3", partition=0),
        ]
    )
    producer.send("t", OutgoingMessageEnvelope(stream, "b4", partition=0, headers=(("last", b""),)))
    p0, p1 = SystemStreamPartition("mem", "s", 0), SystemStreamPartition("mem", "s", 1)
    assert _headers_read(config, p0) == [
        ("one", HEADERS),
        ("two", ()),
        ("b0", ()),
        ("b2", (("k", b"v"),)),
        ("b3", ()),
        ("b4", (("last", b""),)),
    ]
    assert _headers_read(config, p1) == [("b1", (("p", b"1"),))]
    envelopes, _ = broker.envelopes(p0, 3, 1)  # a read from the middle of the batched messages
    assert envelopes[0].headers == (("k", b"v"),)
    assert all(e.headers is NO_HEADERS for e in broker.envelopes(p0, 0)[0] if not e.headers)


def test_a_batch_with_bad_headers_appends_nothing(system: tuple[InMemoryBroker, Config]) -> None:
    broker, config = system
    broker.create_stream("s")
    producer = InMemorySystemFactory().get_producer("mem", config)
    stream = SystemStream("mem", "s")
    good = OutgoingMessageEnvelope(stream, "good", headers=(("a", b"1"),))
    bad = OutgoingMessageEnvelope(stream, "bad", headers=(("a", "text"),))
    with pytest.raises(SystemProducerError, match=r"message to mem\.s: header 'a' has a str value"):
        producer.send_batch([good, bad])
    with pytest.raises(SystemProducerError, match=r"message to mem\.s: header 'a' has a str value"):
        producer.send("t", bad)
    assert broker.read("s") == {0: []}


class CopyHeaders:
    """Sends each message on with the headers it came with plus one naming its offset."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        headers = (*envelope.headers, ("from-offset", envelope.offset.encode()))
        collector.send(
            OutgoingMessageEnvelope(SystemStream("test", "out"), envelope.message, headers=headers)
        )


def test_headers_round_trip_through_a_job() -> None:
    runner = (
        TestRunner.of(CopyHeaders).add_input("in", [Message("a", headers=HEADERS), "b"]).add_output("out")
    )
    result = runner.run(timeout=10)
    assert result.output("out") == {0: ["a", "b"]}
    envelopes, _ = runner.broker.envelopes(SystemStreamPartition("test", "out", 0), 0)
    assert [e.headers for e in envelopes] == [(*HEADERS, ("from-offset", b"0")), (("from-offset", b"1"),)]
