"""Transactions on the real broker (Tansu 0.6.0), written by librdkafka's transactional producer
(confluent-kafka): what a read_committed samza_nb consumer, admin and job do, and what Tansu supports.

Tansu supports: InitProducerId/AddPartitionsToTxn/EndTxn from confluent-kafka (commit and abort write
COMMIT/ABORT control batches), the last stable offset in Fetch responses, and stopping a read_committed
fetch there. It does not send the aborted-transaction list (empty also under read_committed), so on Tansu
the records of aborted transactions reach a read_committed consumer; the filtering itself is tested on
recorded responses in tests/unit/systems/kafka/test_transactions.py. aiokafka's transactional producer
cannot start on Tansu (InitProducerId v0 without a producer id is answered with UNKNOWN_SERVER_ERROR).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from tests.requirements import require

confluent_kafka = require("confluent_kafka", "these tests write with librdkafka's producer (samza_nb[dev])")

from aiokafka import AIOKafkaClient, TopicPartition  # noqa: E402
from aiokafka.protocol.fetch import FetchRequest  # noqa: E402
from aiokafka.record.memory_records import MemoryRecords  # noqa: E402

from samza_nb import Config, SystemStreamPartition  # noqa: E402
from samza_nb.api.metadata import SSPMetadata  # noqa: E402
from samza_nb.runtime.dev_broker import DevBroker  # noqa: E402
from samza_nb.runtime.local import LocalJobRunner, read_checkpoints  # noqa: E402
from samza_nb.systems.kafka import KafkaSystemFactory  # noqa: E402

from .helpers import create_topic, kafka_config, produce  # noqa: E402
from .test_consumer_producer import poll_until  # noqa: E402


class Writer:
    """A transactional producer (or a plain one without ``txn_id``) writing one batch per message to
    partition 0, so offsets follow the order of calls."""

    def __init__(self, bootstrap: str, topic: str, txn_id: str | None = None) -> None:
        conf: dict[str, Any] = {"bootstrap.servers": bootstrap, "linger.ms": 0}
        if txn_id is not None:
            conf["transactional.id"] = txn_id
        else:
            conf["enable.idempotence"] = False
        self.producer = confluent_kafka.Producer(conf)
        self.topic = topic
        if txn_id is not None:
            self.producer.init_transactions(10)

    def send(self, *values: str) -> None:
        for value in values:
            self.producer.produce(self.topic, value.encode(), partition=0)
            self.producer.flush(10)

    def transaction(self, *values: str, commit: bool = True) -> None:
        self.producer.begin_transaction()
        self.send(*values)
        if commit:
            self.producer.commit_transaction(10)
        else:
            self.producer.abort_transaction(10)


async def raw_fetch(bootstrap: str, topic: str, isolation: int) -> tuple[Any, list[tuple[int, bool, str]]]:
    """One Fetch from offset 0: the partition's fields and (offset, control, value) of every batch."""
    client = AIOKafkaClient(bootstrap_servers=bootstrap)
    await client.bootstrap()
    await client.set_topics([topic])
    try:
        leader = client.cluster.leader_for_partition(TopicPartition(topic, 0))
        response = await client.send(
            leader, FetchRequest(50, 1, 1 << 20, isolation, [(topic, [(0, 0, 1 << 20)])])
        )
        part = response.topics[0][1][0]
        records = MemoryRecords(part[-1])
        seen = []
        while records.has_next():
            batch = records.next_batch()
            for r in batch:
                seen.append(
                    (r.offset, batch.is_control_batch, "" if batch.is_control_batch else r.value.decode())
                )
        return part, seen
    finally:
        await client.close()


def test_what_tansu_supports_of_transactions(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    asyncio.run(create_topic(bootstrap, topic))
    writer = Writer(bootstrap, topic, "tansu-probe")
    writer.transaction("c1", "c2")  # 0, 1, COMMIT 2
    writer.transaction("x1", commit=False)  # 3, ABORT 4
    writer.producer.begin_transaction()
    writer.send("open")  # 5: the open transaction
    try:
        _p, _e, highwater, lso, _start, aborted, _replica, _data = asyncio.run(
            raw_fetch(bootstrap, topic, 1)
        )[0]
        assert (highwater, lso) == (6, 5)  # the last stable offset is right
        assert aborted == []  # NOT supported: Kafka would list (producer id, 3) here
        _part, committed = asyncio.run(raw_fetch(bootstrap, topic, 1))
        assert [offset for offset, _control, _value in committed] == [0, 1, 2, 3, 4]  # stops at the LSO
        _part, uncommitted = asyncio.run(raw_fetch(bootstrap, topic, 0))
        assert uncommitted[-1] == (5, False, "open")
        assert [(o, c) for o, c, _v in uncommitted if c] == [(2, True), (4, True)]  # the markers
    finally:
        writer.producer.abort_transaction(10)


def test_a_read_committed_consumer_skips_markers_stops_at_the_lso_and_keeps_real_offsets(
    kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    ssp = SystemStreamPartition("kafka", topic, 0)
    asyncio.run(create_topic(bootstrap, topic))
    a, b, plain = (
        Writer(bootstrap, topic, f"{topic}-a"),
        Writer(bootstrap, topic, f"{topic}-b"),
        Writer(bootstrap, topic),
    )
    plain.send("n1")  # 0
    a.transaction("a1", "a2")  # 1, 2, COMMIT 3
    b.producer.begin_transaction()
    b.send("b1")  # 4: open until below
    plain.send("n2")  # 5
    config = Config(
        {
            "systems.kafka.bootstrap.servers": bootstrap,
            "systems.kafka.consumer.isolation.level": "read_committed",
        }
    )

    async def scenario() -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
        consumer = KafkaSystemFactory().get_consumer("kafka", config)
        consumer.register(ssp, "0")
        await consumer.start()
        try:
            first = await poll_until(consumer, [ssp], 3)
            assert not (await consumer.poll([ssp], 0.3)).get(ssp)  # held at the LSO (offset 4)
            await asyncio.to_thread(b.producer.commit_transaction, 10)  # COMMIT 6
            second = await poll_until(consumer, [ssp], 2)
            return (
                [(int(e.offset), e.message) for e in first[ssp]],
                [(int(e.offset), e.message) for e in second[ssp]],
            )
        finally:
            await consumer.stop()

    first, second = asyncio.run(scenario())
    assert first == [(0, b"n1"), (1, b"a1"), (2, b"a2")]
    assert second == [(4, b"b1"), (5, b"n2")]


def test_admin_newest_is_the_last_delivered_record_not_a_marker(kafka_broker: DevBroker, topic: str) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    asyncio.run(create_topic(bootstrap, topic))
    writer = Writer(bootstrap, topic, f"{topic}-w")
    writer.transaction("c1", "c2")  # 0, 1, COMMIT 2
    writer.transaction("c3")  # 3, COMMIT 4

    def metadata(isolation: str) -> SSPMetadata:
        config = Config(
            {
                "systems.kafka.bootstrap.servers": bootstrap,
                "systems.kafka.consumer.isolation.level": isolation,
            }
        )
        admin = KafkaSystemFactory().get_admin("kafka", config)

        async def read() -> SSPMetadata:
            return (await admin.get_metadata([topic]))[topic][0]

        return asyncio.run(read())

    for isolation in ("read_uncommitted", "read_committed"):
        assert metadata(isolation) == SSPMetadata("0", "3", "5")
    writer.producer.begin_transaction()
    writer.send("open")  # 5
    try:
        assert metadata("read_uncommitted") == SSPMetadata("0", "5", "6")
        assert metadata("read_committed") == SSPMetadata("0", "3", "5")  # upcoming: the LSO
    finally:
        writer.producer.abort_transaction(10)  # ABORT 6
    # Kafka would say newest 3; Tansu lists no aborted transaction, so the aborted record at 5 is what a
    # read_committed consumer delivers last there: the admin agrees with the consumer either way.
    assert metadata("read_committed") == SSPMetadata("0", "5", "7")


class Recorder:
    """Records the stream and offset of every message, in processing order."""

    seen: ClassVar[list[tuple[str, str]]] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Recorder.seen.append((envelope.ssp.stream, envelope.offset))


def test_a_transactional_bootstrap_stream_is_caught_up_and_checkpointed_at_its_last_message(
    kafka_broker: DevBroker, topic: str
) -> None:
    """The bootstrap stream ends in a COMMIT marker: it must count as caught up at its last message (else
    the other input waits forever), and its checkpoint is that message's offset, with no lag left."""
    bootstrap = kafka_broker.bootstrap_servers
    boot, events = topic + "-boot", topic + "-events"
    asyncio.run(create_topic(bootstrap, boot))
    asyncio.run(create_topic(bootstrap, events))
    asyncio.run(produce(bootstrap, events, [b"e%d" % i for i in range(5)]))
    writer = Writer(bootstrap, boot, f"{topic}-boot")
    writer.transaction("b0", "b1")  # 0, 1, COMMIT 2
    writer.transaction("x", commit=False)  # 3, ABORT 4 (delivered on Tansu: it sends no aborted list)
    writer.transaction("b2")  # 5, COMMIT 6
    config = Config(
        kafka_config(
            bootstrap,
            **{
                "job.name": topic,
                "task.inputs": f"kafka.{events},kafka.{boot}",
                f"systems.kafka.streams.{boot}.samza.bootstrap": "true",
                "systems.kafka.consumer.isolation.level": "read_committed",
            },
        )
    )
    Recorder.seen = []
    LocalJobRunner(config, Recorder, max_messages=9).run(timeout=30)
    boot_seen = [offset for stream, offset in Recorder.seen if stream == boot]
    assert boot_seen[0] == "0" and boot_seen[-1] == "5"
    assert [stream for stream, _o in Recorder.seen].index(events) == len(boot_seen)  # bootstrap first
    assert len(Recorder.seen) == 9

    offsets = asyncio.run(read_checkpoints(config, ["Partition 0"]))["Partition 0"]
    assert offsets[SystemStreamPartition("kafka", boot, 0)] == "5"  # the last message, not the marker
    assert offsets[SystemStreamPartition("kafka", events, 0)] == "4"
    admin = KafkaSystemFactory().get_admin("kafka", config)

    async def newest() -> str | None:
        return (await admin.get_metadata([boot]))[boot][0].newest

    assert asyncio.run(newest()) == "5"  # head == checkpoint: no lag
