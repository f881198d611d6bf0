"""A changelog stream written by another job (the same name configured for two jobs) is refused at restore,
in one line naming the stream and its owner, instead of restoring the other job's state (durable log)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.storage.generation import ForeignChangelogError
from samza_nb.storage.manager import state_directory


class CountWords:
    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + 1)


def job(tmp_path: Path, name: str) -> Config:
    return Config(
        {
            "job.name": name,
            "task.inputs": f"file.{name}",
            "systems.file.samza.factory": "samza_nb.systems.file.FileSystemFactory",
            f"systems.file.streams.{name}.path": str(tmp_path / f"{name}.txt"),
            "systems.file.samza.offset.default": "oldest",
            "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
            "stores.counts.key.serde": "string",
            "stores.counts.msg.serde": "int",
            "stores.counts.changelog": "log.shared-changelog",
            "job.logged.store.base.dir": str(tmp_path / "state"),
        }
    )


def append(tmp_path: Path, name: str, words: list[str]) -> None:
    with (tmp_path / f"{name}.txt").open("a") as file:
        file.writelines(f"{word}\n" for word in words)


def test_a_changelog_another_job_wrote_is_refused_at_restore(tmp_path: Path) -> None:
    first, second = job(tmp_path, "first"), job(tmp_path, "second")
    append(tmp_path, "first", ["a", "b"])
    LocalJobRunner(first, CountWords).run(timeout=60)
    append(tmp_path, "second", ["x", "y", "z"])
    LocalJobRunner(second, CountWords).run(timeout=60)
    append(tmp_path, "first", ["c"])
    LocalJobRunner(first, CountWords).run(timeout=60)
    shutil.rmtree(state_directory(first))  # its local state is lost: a restore from the changelog
    with pytest.raises(ForeignChangelogError) as refused:
        LocalJobRunner(first, CountWords).run(timeout=60)
    message = str(refused.value)
    assert "\n" not in message
    assert "log.shared-changelog" in message and "job 'second'" in message, message
