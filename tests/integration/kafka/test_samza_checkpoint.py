"""A job takes over a Java Samza job's checkpoint topic: it resumes exactly where Samza's checkpoint says,
its store restored from the changelog up to the checkpointed changelog offset, and what it writes back is
Samza's format (v1 and v2, the grouper's class name, the changelog offset keyed by the changelog's SSP)."""

from __future__ import annotations

import asyncio
import collections
import random
import struct
from pathlib import Path

from samza_nb import Config, SystemStreamPartition
from samza_nb.checkpoint.samza_serdes import (
    CheckpointKey,
    decode_changelog_offset,
    decode_marker,
    decode_v1,
    decode_v2,
    encode_v1,
    encode_v2,
)
from samza_nb.checkpoint.stream_format import checkpoint_topic
from samza_nb.runtime.dev_broker import DevBroker
from samza_nb.runtime.local import LocalJobRunner

from .helpers import create_topic, kafka_config, produce, read_topic
from .test_changelog import WORDS, CountWords, counts_in

GBP = "org.apache.samza.container.grouper.stream.GroupByPartitionFactory"
FIXTURES = Path(__file__).parents[2] / "fixtures" / "samza_checkpoints"


def test_a_job_resumes_from_a_samza_checkpoint_topic(
    kafka_broker: DevBroker, topic: str, tmp_path: Path
) -> None:
    bootstrap = kafka_broker.bootstrap_servers
    changelog = f"{topic}-counts-changelog"
    job = f"samza-{topic}"
    rng = random.Random(16)
    words = [rng.choice(WORDS) for _ in range(100)]
    checkpointed, ahead = 60, 70  # Samza checkpointed after 60 inputs; its store went on to 70
    config = Config(
        kafka_config(
            bootstrap,
            **{
                "job.name": job,
                "job.systemstreampartition.grouper.factory": GBP,
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
    changelog_ssp = SystemStreamPartition("kafka", changelog, 0)
    input_ssp = SystemStreamPartition("kafka", topic, 0)
    ckpt_topic = checkpoint_topic(job, "1")

    async def java_samza_job() -> None:
        """What a Java Samza job leaves: its inputs, its store's changelog (one record per put, with the
        string and int serdes), and its checkpoint topic, v1 then v2, byte for byte as Samza writes them."""
        await create_topic(bootstrap, topic, 1)
        await produce(bootstrap, topic, [w.encode() for w in words])
        counts: collections.Counter[str] = collections.Counter()
        keys, values = [], []
        for word in words[:ahead]:
            counts[word] += 1
            keys.append(word.encode())
            values.append(struct.pack(">i", counts[word]))
        await create_topic(bootstrap, changelog, 1)
        await produce(bootstrap, changelog, values, keys=keys)
        checkpoint_id = "1700000000000-123456"
        inputs = {input_ssp: str(checkpointed - 1)}  # the last processed offset
        changelog_offset = str(checkpointed - 1)  # the newest changelog offset at that commit
        key_v1 = CheckpointKey("checkpoint", "Partition 0", GBP).encode()
        key_v2 = CheckpointKey("checkpoint-v2", "Partition 0", GBP).encode()
        assert key_v1 == (FIXTURES / "key-v1-gbp").read_bytes()
        assert key_v2 == (FIXTURES / "key-v2-gbp").read_bytes()
        v1 = encode_v1(inputs, {changelog_ssp: changelog_offset}, checkpoint_id)
        v2 = encode_v2(checkpoint_id, inputs, {"counts": (changelog_ssp, changelog_offset)})
        await create_topic(bootstrap, ckpt_topic, 1)
        await produce(bootstrap, ckpt_topic, [v1, v2], keys=[key_v1, key_v2])

    async def scenario() -> dict[int, list[tuple[bytes, bytes]]]:
        await java_samza_job()
        remaining = len(words) - checkpointed
        await LocalJobRunner(config, CountWords, max_messages=remaining).run_async(timeout=60)
        return await read_topic(bootstrap, ckpt_topic, 1)

    held = asyncio.run(asyncio.wait_for(scenario(), 120))[0]
    # Resumed exactly: inputs 0..59 are in the restored store (restored up to changelog offset 59, not
    # the 10 records Samza wrote after it), 60..99 processed once.
    assert counts_in(config) == dict(collections.Counter(words))
    written = held[2:]
    assert [CheckpointKey.decode(key) for key, _ in written[-2:]] == [
        CheckpointKey("checkpoint", "Partition 0", GBP),
        CheckpointKey("checkpoint-v2", "Partition 0", GBP),
    ]
    offsets, legacy = decode_v1(written[-2][1])
    assert legacy == {} and offsets[input_ssp] == str(len(words) - 1)
    checkpoint_id, newest = decode_changelog_offset(offsets[changelog_ssp] or "")
    assert newest is not None and int(newest) >= ahead  # samza_nb's own changelog records follow Samza's
    v2 = decode_v2(written[-1][1])
    assert v2.checkpoint_id == checkpoint_id and v2.inputs == {input_ssp: str(len(words) - 1)}
    marker = v2.markers["org.apache.samza.storage.KafkaChangelogStateBackendFactory"]["counts"]
    assert decode_marker(marker) == (changelog_ssp, newest)
