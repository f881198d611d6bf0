"""A stateful job on Kafka restores its store from a Kafka changelog after its local state is deleted."""

from __future__ import annotations

import asyncio
import collections
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.storage.manager import state_directory

from .helpers import create_topic, kafka_config, produce, read_topic

WORDS = [f"w{i}" for i in range(30)]


class CountWords:
    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + 1)


def counts_in(config: Config) -> dict[str, int]:
    import duckdb

    result: dict[str, int] = {}
    for path in state_directory(config).glob("partition-*.duckdb"):
        conn = duckdb.connect(str(path), read_only=True)
        try:
            for key, value in conn.execute('SELECT k, v FROM "store__counts__p0"').fetchall():
                result[bytes(key).decode()] = int.from_bytes(bytes(value), "big", signed=True)
        finally:
            conn.close()
    return result


@pytest.mark.faults
def test_a_deleted_store_is_restored_from_its_kafka_changelog(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    changelog = f"{topic}-counts-changelog"
    rng = random.Random(5)
    first = [rng.choice(WORDS) for _ in range(300)]
    second = [rng.choice(WORDS) for _ in range(200)]
    config = Config(
        kafka_config(
            bootstrap,
            **{
                "job.name": f"changelog-{topic}",
                "task.inputs": f"kafka.{topic}",
                "systems.kafka.samza.msg.serde": "string",
                "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
                "stores.counts.key.serde": "string",
                "stores.counts.msg.serde": "int",
                "stores.counts.changelog": f"kafka.{changelog}",
                "job.logged.store.base.dir": str(tmp_path / "state"),
            },
        )
    )

    async def scenario() -> None:
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [w.encode() for w in first])
        await LocalJobRunner(config, CountWords, max_messages=len(first)).run_async(timeout=60)
        assert counts_in(config) == dict(collections.Counter(first))
        records = (await read_topic(bootstrap, changelog, 1))[0]
        assert records, "the changelog is empty"
        shutil.rmtree(state_directory(config))
        await produce(bootstrap, topic, [w.encode() for w in second])
        await LocalJobRunner(config, CountWords, max_messages=len(second)).run_async(timeout=60)

    asyncio.run(asyncio.wait_for(scenario(), 120))
    assert counts_in(config) == dict(collections.Counter(first + second))


@pytest.mark.faults
def test_a_kafka_changelog_another_job_wrote_is_refused_at_restore(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    from samza_nb.storage.generation import ForeignChangelogError

    bootstrap = kafka_broker.bootstrap_servers
    changelog = f"{topic}-shared-changelog"

    def job(name: str) -> Config:
        return Config(
            kafka_config(
                bootstrap,
                **{
                    "job.name": f"{name}-{topic}",
                    "task.inputs": f"kafka.{topic}-{name}",
                    "systems.kafka.samza.msg.serde": "string",
                    "systems.kafka.samza.offset.default": "oldest",
                    "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
                    "stores.counts.key.serde": "string",
                    "stores.counts.msg.serde": "int",
                    "stores.counts.changelog": f"kafka.{changelog}",
                    "job.logged.store.base.dir": str(tmp_path / "state"),
                },
            )
        )

    first, second = job("first"), job("second")

    async def run(config: Config, name: str, words: list[str]) -> None:
        await produce(bootstrap, f"{topic}-{name}", [w.encode() for w in words])
        await LocalJobRunner(config, CountWords, max_messages=len(words)).run_async(timeout=60)

    async def scenario() -> None:
        for name in ("first", "second"):
            await create_topic(bootstrap, f"{topic}-{name}", 1)
        await run(first, "first", ["a", "b"])
        await run(second, "second", ["x", "y", "z"])
        await run(first, "first", ["c"])
        shutil.rmtree(state_directory(first))
        await LocalJobRunner(first, CountWords).run_async(timeout=60)

    with pytest.raises(ForeignChangelogError) as refused:
        asyncio.run(asyncio.wait_for(scenario(), 120))
    assert "\n" not in str(refused.value)
    assert changelog in str(refused.value) and f"job 'second-{topic}'" in str(refused.value)
