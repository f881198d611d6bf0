"""Quix Streams on W1 and W2 of the peers benchmark, in one file a reader can run alone against a Kafka
broker (only quixstreams needed): ``python benchmarks/peers/standalone_quix.py --bootstrap HOST:PORT
[--workload W1|W2] [--messages N]``.

An ``Application`` with its defaults (a consumer group of its own, ``auto_offset_reset="earliest"``) and a
``StreamingDataFrame``: W1 ``apply`` + ``filter``, W2 a stateful ``apply`` counting per key (its RocksDB
store and changelog topic, Quix's defaults) over 1,000 keys; ``to_topic``, ``run(count=...)``. Quix reads
only from Kafka: the input (JSON values on a one-partition topic) is written before the clock starts,
and the clock runs from the first message seen to ``run`` returning. The output is read back and
checked. Prints one JSON line; benchmarks/peers/run.py runs it beside its own quixstreams rows as a
cross-check.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from quixstreams import Application, State

KEYS = 1000
FIRST_SEEN = [0.0]


def seen(message: Any) -> Any:
    if not FIRST_SEEN[0]:
        FIRST_SEEN[0] = time.perf_counter()
    return message


def fill(bootstrap: str, topic: str, n: int, workload: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    # A retention Quix can read back (it copies it to the changelog topic it derives from this one).
    admin.create_topics([NewTopic(topic, 1, 1, config={"retention.ms": "-1"})])[topic].result()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50})
    for i in range(n):
        message = {"v": i} if workload == "W1" else {"key": f"k{i % KEYS}"}
        key = None if workload == "W1" else message["key"]
        producer.produce(topic, json.dumps(message).encode(), key)
        if i % 10_000 == 0:
            producer.poll(0)
    producer.flush()


def read(bootstrap: str, topic: str, expected: int) -> list[Any]:
    config = {"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "enable.auto.commit": False}
    consumer = Consumer(config)
    consumer.assign([TopicPartition(topic, 0, 0)])  # no group to join: partition 0 from its start
    values: list[Any] = []
    idle = time.monotonic()
    while len(values) < expected and time.monotonic() - idle < 10:
        for record in consumer.consume(10_000, 1.0):
            if record.error() is None:
                values.append(json.loads(record.value()))
                idle = time.monotonic()
    consumer.close()
    return values


def count(message: dict[str, str], state: State) -> list[Any]:
    total = state.get("count", 0) + 1
    state.set("count", total)
    return [message["key"], total]


def run(bootstrap: str, workload: str, n: int) -> float:
    source, sink = f"quix-in-{uuid.uuid4().hex[:8]}", f"quix-out-{uuid.uuid4().hex[:8]}"
    fill(bootstrap, source, n, workload)
    expected = len(range(0, n, 2)) if workload == "W1" else n
    with tempfile.TemporaryDirectory() as state:
        app = Application(
            broker_address=bootstrap,
            consumer_group=f"quix-{uuid.uuid4().hex[:8]}",
            auto_offset_reset="earliest",
            state_dir=state,
            loglevel="WARNING",
        )
        if workload == "W1":
            sdf = app.dataframe(app.topic(source, value_deserializer="json"))
            sdf = sdf.apply(seen).apply(lambda m: m["v"] * 3).filter(lambda v: v % 2 == 0)
        else:
            topic = app.topic(source, key_deserializer="str", value_deserializer="json")
            sdf = app.dataframe(topic).apply(seen).apply(count, stateful=True)
        sdf.to_topic(app.topic(sink, value_serializer="json"))
        app.run(count=expected, collect=False)
        seconds = time.perf_counter() - FIRST_SEEN[0]
    out = read(bootstrap, sink, expected)
    if workload == "W1":
        assert len(out) == expected and sum(out) == 3 * sum(range(0, n, 2)), "W1: wrong output"
    else:
        final: dict[str, int] = {}
        for key, total in out:
            final[key] = max(final.get(key, 0), total)
        assert len(out) == n and set(final.values()) == {n // KEYS}, "W2: wrong counts"
    return n / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--bootstrap", required=True, help="a Kafka broker, host:port")
    parser.add_argument("--workload", choices=("W1", "W2"), default="W1")
    parser.add_argument("--messages", type=int, default=1_000_000)
    args = parser.parse_args()
    rate = run(args.bootstrap, args.workload, args.messages)
    result = {"library": "quixstreams", "workload": args.workload, "messages": args.messages, "rate": rate}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
