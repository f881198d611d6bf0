"""``%samza_browse`` over Kafka in a real Jupyter kernel (issue 42 item 3): a job's input and output topics
on the suite's broker, as tables decoded with the streams' serdes (keys, headers, timestamps), and one line
for a partition or offset the topic does not have."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaProducer

from samza_nb.runtime.dev_broker import DevBroker
from tests.integration.kafka.helpers import FACTORY, create_topic
from tests.notebook.kernel import Kernel
from tests.requirements import require

require("ipykernel", "a kernel needs ipykernel (samza_nb[notebook])")

pytestmark = pytest.mark.slow

CONFIG = """%%samza_config
job.name = browse-kafka
task.inputs = kafka.{topic}
systems.kafka.samza.factory = {factory}
systems.kafka.bootstrap.servers = {bootstrap}
systems.kafka.samza.msg.serde = json
systems.kafka.samza.key.serde = string
systems.kafka.samza.offset.default = oldest
task.commit.ms = -1
"""

TASK = """%%samza_task
class Copy:
    def process(self, envelope, collector, coordinator):
        out = {{"total": envelope.message["amount"] * 10}}
        collector.send(OutgoingMessageEnvelope(SystemStream("kafka", "{topic}-out"), out, key=envelope.key))
"""


@pytest.fixture
def kernel() -> Iterator[Kernel]:
    k = Kernel()
    k.run("%load_ext samza_nb")
    yield k
    k.close()


async def produce(bootstrap: str, topic: str, count: int) -> None:
    """``count`` JSON orders keyed ``c<i % 2>`` with a header, round robin over 2 partitions."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for i in range(count):
            await producer.send_and_wait(
                topic,
                json.dumps({"amount": i}).encode(),
                key=f"c{i % 2}".encode(),
                partition=i % 2,
                headers=[("source", f"till-{i}".encode())],
                timestamp_ms=1_700_000_000_000 + i,
            )
    finally:
        await producer.stop()


def rows(kernel: Kernel, line: str) -> list[list[str]]:
    """The rows a browse showed (its text; cells split on spaces)."""
    reply = kernel.run(line)
    (result,) = reply.of_type("execute_result")
    assert "class='samza-browse'" in result["content"]["data"]["text/html"]
    return [
        row.split() for row in result["content"]["data"]["text/plain"].splitlines()[2:] if row[:1].isdigit()
    ]


def test_browse_shows_a_jobs_kafka_input_and_output(
    kernel: Kernel, kafka_broker: DevBroker, topic: str
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    asyncio.run(create_topic(bootstrap, topic, partitions=2))
    asyncio.run(produce(bootstrap, topic, 6))
    kernel.run(CONFIG.format(topic=topic, factory=FACTORY, bootstrap=bootstrap))
    kernel.run(TASK.format(topic=topic))
    kernel.run("%samza_run --wait --max-messages 6 --no-dashboard", timeout=120)

    # Partition 1 holds the odd orders; its messages decoded (json, string keys), headers and timestamps.
    assert rows(kernel, f"%samza_browse kafka.{topic} --partition 1 --from 1") == [
        ["1", "1", "c1", "{'amount':", "3}", "source=till-3", "2023-11-14T22:13:20.003Z"],
        ["1", "2", "c1", "{'amount':", "5}", "source=till-5", "2023-11-14T22:13:20.005Z"],
    ]
    # The job's output topic, by key.
    output = rows(kernel, f"%samza_browse kafka.{topic}-out --key c0")
    assert sorted(row[3] + " " + row[4] for row in output) == [
        "{'total': 0}",
        "{'total': 20}",
        "{'total': 40}",
    ]

    reply = kernel.run(f"%samza_browse kafka.{topic} --partition 2", check=False)
    assert (
        reply.error
        == f"NotebookError: samza_browse: kafka.{topic}: --partition 2: the stream has partitions 0..1"
    )
    reply = kernel.run(f"%samza_browse kafka.{topic} --partition 0 --from 7", check=False)
    assert reply.error == (
        f"NotebookError: samza_browse: kafka.{topic}: --from 7: kafka.{topic}#0 has offsets 0..2"
    )
