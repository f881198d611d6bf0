"""The durable log as a system: admin metadata, consumer polls woken by flushes, producer partitioning."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from samza_nb import (
    Config,
    OutgoingMessageEnvelope,
    SystemStream,
    SystemStreamPartition,
)
from samza_nb.api.metadata import SSPMetadata
from samza_nb.config.system_defaults import DEFAULT_LOG_SYSTEM, default_system, log_directory
from samza_nb.control import EndOfStreamMessage, WatermarkMessage
from samza_nb.errors import ConfigError, SamzaError, SystemConsumersError, SystemProducerError
from samza_nb.systems.base import ChangelogStreamAdmin, SystemFactory
from samza_nb.systems.log import DurableLog, LogSystemFactory
from samza_nb.systems.partitioner import key_partition
from samza_nb.systems.registry import system_factory

from .producing import read_all, write_all


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
        with pytest.raises(SystemConsumersError, match=r"log.events#0 offset 2: json serde cannot decode"):
            await consumer.poll([ssp], 0)
        await consumer.stop()

    asyncio.run(bad())


@pytest.mark.parametrize("batched", [False, True])
def test_event_time_travels_with_the_message(tmp_path: Path, batched: bool) -> None:
    """An envelope's timestamp reaches the consumer; a message sent without one gets the append time."""
    cfg = config(
        tmp_path, **{"systems.log.streams.keyed.partitions": "3", "systems.log.streams.rr.partitions": "2"}
    )
    plain, keyed, rr = (SystemStream("log", name) for name in ("plain", "keyed", "rr"))
    sends = [
        OutgoingMessageEnvelope(plain, b"a", timestamp=1_000),
        OutgoingMessageEnvelope(plain, b"b"),
        OutgoingMessageEnvelope(plain, b"c", timestamp=-5),
        *(OutgoingMessageEnvelope(keyed, f"v{i}", key=f"k{i % 4}", timestamp=100 + i) for i in range(12)),
        *(OutgoingMessageEnvelope(rr, f"r{i}", timestamp=None if i % 3 else 200 + i) for i in range(6)),
        OutgoingMessageEnvelope(SystemStream("log", "none"), b"n"),
    ]

    write_all(cfg, sends, batched=batched)
    ssps = [
        SystemStreamPartition("log", "plain", 0),
        *(SystemStreamPartition("log", "keyed", p) for p in range(3)),
        *(SystemStreamPartition("log", "rr", p) for p in range(2)),
        SystemStreamPartition("log", "none", 0),
    ]
    got = read_all(cfg, ssps)
    plain_envelopes = got[ssps[0]]
    assert [(e.message, e.timestamp) for e in plain_envelopes][::2] == [(b"a", 1_000), (b"c", -5)]
    appended = plain_envelopes[1].timestamp
    assert isinstance(appended, int) and appended > 1_600_000_000_000  # the append time
    keyed_stamps = {e.message: e.timestamp for ssp in ssps[1:4] for e in got.get(ssp, [])}
    assert keyed_stamps == {f"v{i}".encode(): 100 + i for i in range(12)}
    for ssp in ssps[1:4]:  # placed by key as before
        for e in got.get(ssp, []):
            assert key_partition(e.key, 3) == ssp.partition
    rr_stamps = {e.message: e.timestamp for ssp in ssps[4:6] for e in got[ssp]}
    assert {m: ts for m, ts in rr_stamps.items() if ts is not None and ts < 1_000} == {b"r0": 200, b"r3": 203}
    assert all(
        ts is not None and ts > 1_600_000_000_000 for m, ts in rr_stamps.items() if m not in (b"r0", b"r3")
    )
    none_stamp = got[ssps[-1]][0].timestamp  # a stream no message of which has event time
    assert none_stamp is not None and none_stamp > 1_600_000_000_000
    # read from the middle of a batch: the timestamps stay with their records
    middle = read_all(cfg, [ssps[0]], "2")[ssps[0]]
    assert [(e.offset, e.timestamp) for e in middle] == [("2", -5)]


def test_decode_errors_name_the_stream_partition_and_offset(tmp_path: Path) -> None:
    """A serde error while reading, a user serde's own exception included, names the SSP and offset."""
    cfg = config(
        tmp_path,
        **{
            "systems.log.streams.inter.samza.msg.serde": "samza_nb.control.serde.IntermediateMessageSerde",
            "systems.log.streams.custom.samza.msg.serde": f"{__name__}.ExplodingSerde",
        },
    )
    with DurableLog(tmp_path / "log") as log:
        log.create_stream("inter", 2)
        log.send("inter", b'\x00"fine"', partition=1)
        log.send("inter", b"\x07junk", partition=1)
        log.create_stream("custom", 1)
        log.send("custom", b"x")
        log.flush()
    with pytest.raises(
        SystemConsumersError, match=r"log\.inter#1 offset 1: unknown intermediate message type 7"
    ):
        read_all(cfg, [SystemStreamPartition("log", "inter", 1)])
    with pytest.raises(SystemConsumersError, match=r"log\.custom#0 offset 0: .*ValueError: boom"):
        read_all(cfg, [SystemStreamPartition("log", "custom", 0)])


class ExplodingSerde:
    """A user serde whose decoding raises its own exception."""

    def to_bytes(self, obj: object) -> bytes:
        return b"x"

    def from_bytes(self, data: bytes) -> object:
        raise ValueError("boom")


def test_control_messages_round_trip_through_the_log(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        **{
            "systems.log.streams.inter.samza.msg.serde": (
                "samza_nb.control.serde.PickleIntermediateMessageSerde"
            ),
            "systems.log.streams.inter.samza.key.serde": "pickle",
        },
    )
    inter = SystemStream("log", "inter")
    sends = [
        OutgoingMessageEnvelope(inter, {"a": (1, 2)}, key=("k", 1), timestamp=10),
        OutgoingMessageEnvelope(inter, WatermarkMessage("t0", timestamp=10), partition=0),
        OutgoingMessageEnvelope(inter, EndOfStreamMessage("t0"), partition=0),
    ]

    async def write() -> None:
        producer = LogSystemFactory().get_producer("log", cfg)
        await producer.start()
        producer.send_batch(sends)
        await producer.stop()

    asyncio.run(write())
    ssp = SystemStreamPartition("log", "inter", 0)
    got = read_all(cfg, [ssp])[ssp]
    assert [(e.key, e.message) for e in got] == [
        (("k", 1), {"a": (1, 2)}),
        (None, sends[1].message),
        (None, sends[2].message),
    ]
    assert got[0].timestamp == 10
