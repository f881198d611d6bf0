"""The durable log as a system: admin metadata, consumer polls woken by flushes, producer partitioning."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SystemStream, SystemStreamPartition
from samza_nb.api.metadata import SSPMetadata
from samza_nb.config.system_defaults import DEFAULT_LOG_SYSTEM, default_system, log_directory
from samza_nb.errors import ConfigError, SamzaError, SystemConsumersError, SystemProducerError
from samza_nb.systems.base import ChangelogStreamAdmin, SystemFactory
from samza_nb.systems.log import DurableLog, LogSystemFactory
from samza_nb.systems.partitioner import key_partition
from samza_nb.systems.registry import system_factory


def config(tmp_path: Path, **extra: str) -> Config:
    return Config({"systems.log.log.dir": str(tmp_path / "log"), **extra})


def test_the_system_named_log_is_the_durable_log_unless_configured(tmp_path: Path) -> None:
    assert DEFAULT_LOG_SYSTEM == "log"
    assert isinstance(system_factory(Config(), "log"), LogSystemFactory)
    other = Config({"systems.log.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory"})
    assert type(system_factory(other, "log")).__name__ == "InMemorySystemFactory"
    with pytest.raises(ConfigError, match="no factory for system 'logs'"):
        system_factory(Config(), "logs")
    assert isinstance(LogSystemFactory(), SystemFactory)


def test_default_system_and_log_directory(tmp_path: Path) -> None:
    assert default_system(Config()) == "log"
    assert default_system(Config({"job.default.system": "kafka"})) == "kafka"
    assert log_directory(Config({"job.logged.store.base.dir": str(tmp_path)}), "log") == tmp_path / "log"
    assert log_directory(config(tmp_path), "log") == tmp_path / "log"
    assert log_directory(Config(), "x") == (Path(".samza_nb/state") / "log").absolute()


def test_admin_metadata_offsets_and_stream_creation(tmp_path: Path) -> None:
    admin = LogSystemFactory().get_admin("log", config(tmp_path))
    assert isinstance(admin, ChangelogStreamAdmin)

    async def go() -> None:
        await admin.create_stream("s", 2)
        await admin.create_stream("s", 2)
        with pytest.raises(SamzaError, match="exists with 2 partitions, not 3"):
            await admin.create_changelog_stream("s", 3)
        assert (await admin.get_metadata(["s"]))["s"][1] == SSPMetadata(None, None, "0")
        with DurableLog(tmp_path / "log") as log:
            log.send("s", b"a", partition=1)
            log.send("s", b"b", partition=1)
            assert (await admin.get_metadata(["s"]))["s"][1] == SSPMetadata(None, None, "0")  # not flushed
        metadata = await admin.get_metadata(["s"])
        assert metadata == {"s": {0: SSPMetadata(None, None, "0"), 1: SSPMetadata("0", "1", "2")}}
        with pytest.raises(SamzaError, match="no stream 'nope'"):
            await admin.get_metadata(["nope"])

    asyncio.run(go())
    assert admin.offset_comparator("2", "10") < 0 and admin.offset_after("9") == "10"


def test_a_poll_returns_flushed_messages_and_waits_for_a_flush(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    factory = LogSystemFactory()
    ssp = SystemStreamPartition("log", "s", 0)

    async def go() -> None:
        producer = factory.get_producer("log", cfg)
        await producer.start()
        consumer = factory.get_consumer("log", cfg)
        with DurableLog(tmp_path / "log") as log:
            log.create_stream("s", 1)
            log.send("s", b"zero", key=b"k")
            log.flush()
        consumer.register(ssp, "0")
        await consumer.start()
        first = await consumer.poll([ssp], 0)
        assert [(e.offset, e.key, e.message) for e in first[ssp]] == [("0", b"k", b"zero")]
        assert isinstance(first[ssp][0].timestamp, int)
        assert await consumer.poll([ssp], 0) == {}

        async def later() -> None:
            await asyncio.sleep(0)
            producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "s"), "one"))
            await asyncio.sleep(0)
            assert await consumer.poll([ssp], 0) == {}  # sent, not yet flushed: not visible
            await producer.flush("t")

        writer = asyncio.create_task(later())
        second = await consumer.poll([ssp], 60)  # woken by the flush, long before the timeout
        await writer
        assert [(e.offset, e.message) for e in second[ssp]] == [("1", b"one")]
        await consumer.stop()
        await producer.stop()

    asyncio.run(go())


def test_a_poll_hands_out_at_most_a_batch_per_partition(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    ssp = SystemStreamPartition("log", "s", 0)
    with DurableLog(tmp_path / "log") as log:
        log.create_stream("s", 1)
        log.send_batch("s", [(None, str(i), None) for i in range(10_000)])

    async def go() -> list[int]:
        consumer = LogSystemFactory().get_consumer("log", cfg)
        consumer.register(ssp, "5")
        await consumer.start()
        sizes, offsets = [], []
        while batch := (await consumer.poll([ssp], 0)).get(ssp):
            sizes.append(len(batch))
            offsets += [int(e.offset) for e in batch]
            assert [e.message for e in batch] == [e.offset.encode() for e in batch]
        await consumer.stop()
        assert offsets == list(range(5, 10_000))
        return sizes

    sizes = asyncio.run(go())
    assert max(sizes) <= LogSystemFactory().get_consumer("log", cfg).MAX_POLL_BATCH


def test_a_consumer_of_a_missing_stream_fails_at_start(tmp_path: Path) -> None:
    consumer = LogSystemFactory().get_consumer("log", config(tmp_path))
    consumer.register(SystemStreamPartition("log", "nope", 0), "0")
    with pytest.raises(SystemConsumersError, match=r"input log.nope#0: .*no stream 'nope'"):
        asyncio.run(consumer.start())


def test_the_producer_creates_streams_and_partitions_like_kafka(tmp_path: Path) -> None:
    cfg = config(tmp_path, **{"systems.log.streams.out.partitions": "4"})
    out = SystemStream("log", "out")

    async def go() -> None:
        producer = LogSystemFactory().get_producer("log", cfg)
        await producer.start()
        producer.send("t", OutgoingMessageEnvelope(out, b"by-key", key=b"user-7"))
        producer.send_batch(
            [
                OutgoingMessageEnvelope(out, b"by-partition-key", key=b"x", partition_key="user-7"),
                OutgoingMessageEnvelope(out, b"explicit", partition=3),
                OutgoingMessageEnvelope(out, None, key=b"gone"),
            ]
        )
        await producer.stop()

    asyncio.run(go())
    with DurableLog(tmp_path / "log") as log:
        assert log.partitions("out") == 4
        home = key_partition(b"user-7", 4)
        assert [(k, v) for _, k, v in log.read("out", home)][:2] == [
            (b"user-7", b"by-key"),
            (b"x", b"by-partition-key"),
        ]
        assert (None, b"explicit") in [(k, v) for _, k, v in log.read("out", 3)]
        assert (b"gone", None) in [(k, v) for _, k, v in log.read("out", key_partition(b"gone", 4))]


def test_the_producer_refuses_values_that_are_not_bytes_and_keeps_them(tmp_path: Path) -> None:
    out = SystemStream("log", "out")

    async def go() -> None:
        producer = LogSystemFactory().get_producer("log", config(tmp_path))
        await producer.start()
        producer.send("t", OutgoingMessageEnvelope(out, {"a": 1}))
        with pytest.raises(SystemProducerError, match=r"system 'log': .*is a dict .*serialize it first"):
            await producer.flush("t")
        with pytest.raises(SystemProducerError):  # not dropped: every flush fails until fixed
            await producer.flush("t")

    asyncio.run(go())


def test_serdes_apply_as_on_kafka_and_changelogs_stay_bytes(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        **{
            "systems.log.samza.msg.serde": "json",
            "systems.log.samza.key.serde": "string",
            "systems.log.streams.raw.samza.msg.serde": "bytes",
            "stores.counts.changelog": "counts-log",  # on "log": no default system
        },
    )
    ssp = SystemStreamPartition("log", "events", 0)

    async def go() -> list[tuple[object, object]]:
        producer = LogSystemFactory().get_producer("log", cfg)
        await producer.start()
        producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "events"), {"n": 1}, key="k"))
        producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "events"), None, key="gone"))
        producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "raw"), b"\xff"))
        producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "counts-log"), b"\x00", key=b"\x01"))
        await producer.stop()
        consumer = LogSystemFactory().get_consumer("log", cfg)
        consumer.register(ssp, "0")
        await consumer.start()
        envelopes = (await consumer.poll([ssp], 0))[ssp]
        await consumer.stop()
        return [(e.key, e.message) for e in envelopes]

    assert asyncio.run(go()) == [("k", {"n": 1}), ("gone", None)]
    with DurableLog(tmp_path / "log") as log:
        assert list(log.read("events", 0)) == [(0, b"k", b'{"n":1}'), (1, b"gone", None)]
        assert list(log.read("raw", 0)) == [(0, None, b"\xff")]
        assert list(log.read("counts-log", 0)) == [(0, b"\x01", b"\x00")]
        log.send("events", b"not json")

    async def bad() -> None:
        consumer = LogSystemFactory().get_consumer("log", cfg)
        consumer.register(ssp, "2")
        await consumer.start()
        with pytest.raises(SystemConsumersError, match=r"log.events#0 offset 2: the json serde"):
            await consumer.poll([ssp], 0)
        await consumer.stop()

    asyncio.run(bad())
