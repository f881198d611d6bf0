"""The zlib-JSON serde plug-in, registered once by name, serves a stream and a store alike.

``serializers.registry.zjson.class`` registers it; ``systems.log.samza.msg.serde = zjson`` puts it at the
durable log's boundary (the producer compresses, the consumer decompresses) and
``stores.docs.msg.serde = zjson`` under a DuckDB store. One registry resolves both names.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any, ClassVar

from samza_nb import OutgoingMessageEnvelope, RequestScope, SystemStream
from samza_nb.systems.log import DurableLog
from samza_nb.testing import TestRunner

DOCS = [
    {"user": "ada", "pages": [f"/docs/{i}" for i in range(50)], "score": 1.5},
    {"user": "grace", "pages": ["/"], "score": 2.0},
]
OUT = SystemStream("log", "docs")


def job_config(tmp_path: Path) -> dict[str, str]:
    return {
        "serializers.registry.zjson.class": "samza_nb_ext.serde.ZlibJsonSerde",
        "systems.log.samza.factory": "samza_nb.systems.log.LogSystemFactory",
        "systems.log.log.dir": str(tmp_path / "log"),
        "systems.log.samza.offset.default": "oldest",
        "systems.log.samza.key.serde": "string",
        "systems.log.samza.msg.serde": "zjson",
        "job.logged.store.base.dir": str(tmp_path / "state"),
        "stores.docs.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.docs.key.serde": "string",
        "stores.docs.msg.serde": "zjson",
    }


class Publish:
    """Sends each document to ``log.docs``, keyed by user: the stream's serde encodes it."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        doc = envelope.message
        collector.send(OutgoingMessageEnvelope(OUT, doc, key=doc["user"]))


class Keep:
    """Reads ``log.docs`` (decoded by the stream's serde) into the store (encoded by the store's serde)."""

    seen: ClassVar[list[tuple[str, Any]]] = []

    def init(self, context: Any) -> None:
        self.docs = context.get_store("docs")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Keep.seen.append((envelope.key, envelope.message))
        self.docs.put(envelope.key, envelope.message)
        if len(Keep.seen) == len(DOCS):
            coordinator.commit(RequestScope.ALL_TASKS_IN_CONTAINER)
            coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)


class Reader:
    """Reads the store in init: a fresh container, so the values come from DuckDB through the serde."""

    found: ClassVar[dict[str, Any]] = {}

    def init(self, context: Any) -> None:
        Reader.found = dict(context.get_store("docs").all())

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


def test_one_registered_serde_on_a_stream_and_a_store(tmp_path: Path) -> None:
    config = job_config(tmp_path)
    TestRunner.of(Publish).add_input("in", DOCS).add_config(config).run(timeout=30)

    # On the stream: zlib-compressed JSON, with the sorted keys the serde writes.
    with DurableLog(tmp_path / "log") as log:
        records = list(log.read("docs", 0))
    assert [key for _, key, _ in records] == [b"ada", b"grace"]
    first = zlib.decompress(records[0][2]).decode()
    assert first == json.dumps(DOCS[0], separators=(",", ":"), sort_keys=True)

    # Read back by a job: the consumer decodes with the same serde, and the store encodes with it.
    Keep.seen = []
    reading = {**config, "task.inputs": "log.docs"}
    TestRunner.of(Keep).add_input("unused", []).add_config(reading).run(timeout=30)
    assert Keep.seen == [("ada", DOCS[0]), ("grace", DOCS[1])]

    TestRunner.of(Reader).add_input("in", []).add_config(config).run(timeout=30)
    assert Reader.found == {"ada": DOCS[0], "grace": DOCS[1]}
