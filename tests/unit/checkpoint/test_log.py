"""Checkpoints on a durable log stream: Samza's key/value JSON, last value per task wins (several
processes writing at once: tests/integration/checkpoint/test_log_processes.py)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from samza_nb import Config, SystemStreamPartition
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.checkpoint.base import load_checkpoint_manager
from samza_nb.checkpoint.log import LogCheckpointManager, LogCheckpointManagerFactory
from samza_nb.checkpoint.samza_serdes import CheckpointKey, decode_v1
from samza_nb.checkpoint.stream_format import CheckpointFormat
from samza_nb.errors import CheckpointError, ConfigError
from samza_nb.systems.log import DurableLog

STREAM = "__samza_checkpoint_ver_1_for_my-job_1"
GBP = "org.apache.samza.container.grouper.stream.GroupByPartitionFactory"
CHANGELOG = SystemStreamPartition("kafka", "counts-changelog", 0)


def encode_key(task: str, grouper: str = GBP, kind: str = "checkpoint") -> bytes:
    return CheckpointKey(kind, task, grouper).encode()


def encode_checkpoint(cp: Checkpoint) -> bytes:
    """The v1 value of ``cp`` (the first message samza_nb writes per checkpoint)."""
    return CheckpointFormat().encode("t", cp)[0][1]


def job_config(tmp_path: Path, **extra: str) -> Config:
    return Config(
        {
            "job.name": "my_job",
            "job.logged.store.base.dir": str(tmp_path),
            "task.checkpoint.factory": "samza_nb.checkpoint.log.LogCheckpointManagerFactory",
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.changelog": "kafka.counts-changelog",
            **extra,
        }
    )


def checkpoint(offset: str, store: str | None = None) -> Checkpoint:
    ssp = SystemStreamPartition("kafka", "in", 0)
    return Checkpoint(
        {ssp: offset}, {"counts": store} if store else {}, {"counts": CHANGELOG} if store else {}
    )


def manager(tmp_path: Path, *tasks: str) -> LogCheckpointManager:
    result = load_checkpoint_manager(job_config(tmp_path))
    assert isinstance(result, LogCheckpointManager)
    for task in tasks:
        result.register(task)
    return result


def test_checkpoints_are_written_durably_and_the_last_per_task_wins(tmp_path: Path) -> None:
    async def first() -> None:
        m = manager(tmp_path, "Partition 0", "Partition 1")
        await m.start()
        assert await m.read_last_checkpoint("Partition 0") is None
        await m.write_checkpoint("Partition 0", checkpoint("1"))
        await m.write_checkpoint("Partition 1", checkpoint("7", "3"))
        await m.write_checkpoint("Partition 0", checkpoint("2"))
        assert await m.read_last_checkpoint("Partition 0") == checkpoint("2")
        await m.stop()

    async def second() -> None:
        m = manager(tmp_path, "Partition 0", "Partition 1")
        await m.start()
        assert await m.read_last_checkpoint("Partition 0") == checkpoint("2")
        assert await m.read_last_checkpoint("Partition 1") == checkpoint("7", "3")
        await m.stop()
        with pytest.raises(CheckpointError, match="start it first"):
            await m.read_last_checkpoint("Partition 0")

    asyncio.run(first())
    asyncio.run(second())
    with DurableLog(tmp_path / "log") as log:  # Samza's format, in the log directory
        records = list(log.read(STREAM, 0))
    assert [key for _, key, _ in records] == [  # v1 and v2 per checkpoint, as Samza
        encode_key(task, kind=kind)
        for task in ("Partition 0", "Partition 1", "Partition 0")
        for kind in ("checkpoint", "checkpoint-v2")
    ]
    offsets, legacy = decode_v1(records[2][2])
    assert legacy == {}
    assert offsets[SystemStreamPartition("kafka", "in", 0)] == "7"
    assert offsets[CHANGELOG] is not None and offsets[CHANGELOG].endswith(":3")
    assert b'"SystemStreamPartition [kafka, in, 0]"' in records[2][2]


def test_a_tombstone_deletes_and_another_groupers_checkpoints_are_ignored(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log") as log:
        log.create_stream(STREAM, 1)
        log.send(STREAM, encode_checkpoint(checkpoint("5")), key=encode_key("Partition 0"))
        log.send(STREAM, None, key=encode_key("Partition 0"))
        log.send(STREAM, encode_checkpoint(checkpoint("9")), key=encode_key("Partition 1", "other"))
        log.send(STREAM, b"not json", key=b"not a checkpoint key")

    async def go() -> None:
        m = manager(tmp_path, "Partition 0", "Partition 1")
        await m.start()
        assert await m.read_last_checkpoint("Partition 0") is None
        assert await m.read_last_checkpoint("Partition 1") is None
        await m.stop()

    asyncio.run(go())


def test_a_damaged_checkpoint_value_is_an_error_naming_stream_and_offset(tmp_path: Path) -> None:
    with DurableLog(tmp_path / "log") as log:
        log.create_stream(STREAM, 1)
        log.send(STREAM, b"{}", key=encode_key("Partition 0"))
        log.send(STREAM, b"[1]", key=encode_key("Partition 0"))
    with pytest.raises(
        CheckpointError, match=f"{STREAM} offset 1: the checkpoint value of task 'Partition 0' is not a"
    ):
        asyncio.run(manager(tmp_path, "Partition 0").start())


def test_the_checkpoint_system_must_be_a_durable_log(tmp_path: Path) -> None:
    other = {  # any system but the durable log (the in-memory one needs no extra)
        "task.checkpoint.system": "mem",
        "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
    }
    with pytest.raises(ConfigError, match="durable log checkpoints need a durable log system") as info:
        LogCheckpointManagerFactory().get_checkpoint_manager(job_config(tmp_path, **other))
    assert info.value.key == "task.checkpoint.system"
    own = job_config(
        tmp_path,
        **{
            "job.default.system": "durable",
            "systems.durable.samza.factory": "samza_nb.systems.log.LogSystemFactory",
            "systems.durable.log.dir": str(tmp_path / "elsewhere"),
        },
    )
    assert LogCheckpointManagerFactory().get_checkpoint_manager(own).directory == tmp_path / "elsewhere"


def test_checkpoints_in_samza_nbs_old_spelling_are_deleted_once_rewritten(tmp_path: Path) -> None:
    """A checkpoint samza_nb wrote before it wrote Samza's format (short grouper name) is read, and the
    task's next write deletes it (a tombstone under its key): compaction then drops it, and Samza, which
    refuses a checkpoint of another grouper, never meets it."""
    old_key = (
        b'{"systemstreampartition-grouper-factory":"group-by-partition",'
        b'"taskName":"Partition 0","type":"checkpoint"}'
    )
    old_value = (
        b'{"SystemStreamPartition [kafka, in, 0]":{"offset":"5","partition":"0",'
        b'"stream":"in","system":"kafka"}}'
    )
    with DurableLog(tmp_path / "log") as log:
        log.create_stream(STREAM, 1)
        log.append(STREAM, 0, [old_value], [old_key])
        log.flush()

    async def migrate() -> None:
        m = manager(tmp_path, "Partition 0")
        await m.start()
        assert await m.read_last_checkpoint("Partition 0") == checkpoint("5")
        await m.write_checkpoint("Partition 0", checkpoint("6"))
        await m.write_checkpoint("Partition 0", checkpoint("7"))  # the tombstone is written once
        await m.stop()

    asyncio.run(migrate())
    with DurableLog(tmp_path / "log") as log:
        records = [(key, value) for _, key, value in log.read(STREAM, 0)]
    assert [key for key, _ in records] == [
        old_key,
        encode_key("Partition 0"),
        encode_key("Partition 0", kind="checkpoint-v2"),
        old_key,
        encode_key("Partition 0"),
        encode_key("Partition 0", kind="checkpoint-v2"),
    ]
    assert records[3][1] is None


def test_a_task_with_only_unread_versions_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A topic holding only v2 checkpoints, read with the default read versions (1), gives no checkpoint:
    not silently."""

    async def scenario() -> None:
        writer = load_checkpoint_manager(job_config(tmp_path, **{"task.checkpoint.write.versions": "2"}))
        writer.register("Partition 0")
        await writer.start()
        await writer.write_checkpoint("Partition 0", checkpoint("3"))
        await writer.stop()
        reader = manager(tmp_path, "Partition 0")
        await reader.start()
        with caplog.at_level(logging.WARNING):
            assert await reader.read_last_checkpoint("Partition 0") is None
        await reader.stop()

    asyncio.run(scenario())
    assert "task 'Partition 0' has checkpoints of version 2 only" in caplog.text
    assert "task.checkpoint.read.versions = 1" in caplog.text


def test_forget_all_tombstones_every_tasks_checkpoint_durably(tmp_path: Path) -> None:
    """A reset (samza-nb reset) forgets the checkpoints of every task on the stream, registered or not."""

    async def scenario() -> list[str]:
        m = manager(tmp_path, "Partition 0", "Partition 1")
        await m.start()
        await m.write_checkpoint("Partition 0", checkpoint("4"))
        await m.write_checkpoint("Partition 1", checkpoint("9", "3"))
        await m.stop()
        unregistered = manager(tmp_path)
        await unregistered.start()
        forgotten = await unregistered.forget_all()
        await unregistered.stop()
        again = manager(tmp_path, "Partition 0", "Partition 1")
        await again.start()
        assert await again.read_last_checkpoint("Partition 0") is None
        assert await again.read_last_checkpoint("Partition 1") is None
        await again.stop()
        return forgotten

    assert asyncio.run(scenario()) == ["Partition 0", "Partition 1"]
