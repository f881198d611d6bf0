"""A job whose stores changed between runs keeps committing: a store removed from the config (or named only
in a checkpoint taken over from another job) is left out of the next checkpoint instead of failing it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from samza_nb import Config
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.systems.log import DurableLog


class Remember:
    """Puts every message into store ``a`` and, when configured, into store ``b``."""

    def init(self, context: Any) -> None:
        self.stores = [context.get_store(name) for name in Remember.stores]

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        for store in self.stores:
            store.put(envelope.message, b"1")

    stores: tuple[str, ...] = ()


def config(base: Path, stores: tuple[str, ...]) -> Config:
    values = {
        "job.name": "stores-change",
        "task.inputs": "log.in",
        "systems.log.samza.offset.default": "oldest",
        "systems.log.log.dir": str(base / "log"),
        "job.logged.store.base.dir": str(base / "state"),
        "task.checkpoint.factory": "samza_nb.checkpoint.log.LogCheckpointManagerFactory",
    }
    for store in stores:
        values[f"stores.{store}.factory"] = "samza_nb.storage.duckdb.DuckDBStoreFactory"
        values[f"stores.{store}.changelog"] = f"log.{store}-changelog"
    return Config(values)


def run(base: Path, stores: tuple[str, ...], first: int) -> int:
    log = DurableLog(base / "log")
    try:
        log.create_stream("in", 1)
        log.send_batch("in", [(None, f"w{i}", None) for i in range(first, first + 10)])
        log.flush()
    finally:
        log.close()
    Remember.stores = stores
    runner = LocalJobRunner(config(base, stores), Remember, max_messages=10)
    runner.run(timeout=60)
    return runner.processed


def test_a_store_removed_from_the_config_is_left_out_of_the_next_checkpoint(tmp_path: Path) -> None:
    assert run(tmp_path, ("a", "b"), 0) == 10
    assert run(tmp_path, ("a",), 10) == 10  # commits (with b's old changelog offset in hand) succeed
    assert run(tmp_path, ("a",), 20) == 10  # and the checkpoint they wrote resumes exactly


def test_an_input_on_a_changelog_stream_stays_an_input() -> None:
    """A task may read another partition of its store's changelog stream: that entry has a plain offset and
    is read back as an input, the store's own "<checkpointId>:<offset>" entry as the store's."""
    from samza_nb import SystemStream, SystemStreamPartition
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.checkpoint.stream_format import CheckpointFormat, CheckpointTable

    changelog = SystemStreamPartition("kafka", "counts-changelog", 0)
    other = SystemStreamPartition("kafka", "counts-changelog", 1)
    views = SystemStreamPartition("kafka", "page-views", 0)
    checkpoint_format = CheckpointFormat(
        write_versions=(1,), changelogs={"counts": SystemStream("kafka", "counts-changelog")}
    )
    written = Checkpoint({views: "41", other: "17"}, {"counts": "7"}, {"counts": changelog})
    table = CheckpointTable("__samza_checkpoint_ver_1_for_j_1", checkpoint_format)
    for offset, (key, value) in enumerate(checkpoint_format.encode("Partition 0", written)):
        table.apply(key, value, offset)
    read = table.checkpoints["Partition 0"]
    assert read == written
    assert read.offsets == {views: "41", other: "17"} and read.changelog_offsets == {"counts": "7"}
