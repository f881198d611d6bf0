"""The zlib-JSON serde plug-in, registered with serializers.registry.<name>.class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from samza_nb.config import Config
from samza_nb.serde import Serde, SerdeError, SerdeRegistry
from samza_nb.testing import TestRunner

REGISTRY = {"serializers.registry.zjson.class": "samza_nb_ext.serde.ZlibJsonSerde"}
DOCUMENT = {"user": "ada", "pages": [f"/docs/{i}" for i in range(200)], "score": 1.5, "ok": True}


def test_the_registry_finds_it_by_name_and_it_round_trips() -> None:
    serde = SerdeRegistry.from_config(Config(REGISTRY)).get("zjson", key="stores.docs.msg.serde")
    assert isinstance(serde, Serde)
    data = serde.to_bytes(DOCUMENT)
    assert len(data) < len(str(DOCUMENT)) / 4  # repetitive JSON compresses well
    assert serde.from_bytes(data) == DOCUMENT


def test_what_it_cannot_encode_or_decode_is_a_serde_error() -> None:
    from samza_nb_ext.serde import ZlibJsonSerde

    with pytest.raises(SerdeError, match="zjson cannot encode set"):
        ZlibJsonSerde().to_bytes({1, 2})
    with pytest.raises(SerdeError, match="zjson cannot decode 3 bytes"):
        ZlibJsonSerde().from_bytes(b"abc")


class Writer:
    def init(self, context: Any) -> None:
        self.docs = context.get_store("docs")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.docs.put(envelope.message["user"], envelope.message)


class Reader:
    """Reads the store in init: a fresh container, so the values come from DuckDB through the serde."""

    found: dict[str, Any] = {}

    def init(self, context: Any) -> None:
        docs = context.get_store("docs")
        Reader.found = dict(docs.all())

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


def test_a_store_keeps_its_values_with_it(tmp_path: Path) -> None:
    config = {
        **REGISTRY,
        "job.logged.store.base.dir": str(tmp_path),
        "stores.docs.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.docs.key.serde": "string",
        "stores.docs.msg.serde": "zjson",
    }
    documents = [DOCUMENT, {**DOCUMENT, "user": "grace"}]
    TestRunner.of(Writer).add_input("in", documents).add_config(config).run(timeout=30)
    TestRunner.of(Reader).add_input("in", []).add_config(config).run(timeout=30)
    assert Reader.found == {"ada": DOCUMENT, "grace": {**DOCUMENT, "user": "grace"}}
