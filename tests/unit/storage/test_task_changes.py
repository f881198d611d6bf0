"""A state file is one task's: when the job's tasks change (here an input going from 10 to 11 partitions,
which moves tasks to other changelog partitions in Samza's string order), a run that would hand a task
another task's state is refused, naming the file and both tasks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from samza_nb.errors import ConfigError
from samza_nb.testing import TestRunner


class Count:
    def init(self, context: Any) -> None:
        self.counts = context.get_store("counts")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.counts.put(envelope.message, (self.counts.get(envelope.message) or 0) + 1)


def run(tmp_path: Path, partitions: int) -> None:
    config = {
        "stores.counts.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
        "stores.counts.key.serde": "string",
        "stores.counts.msg.serde": "long",
        "job.logged.store.base.dir": str(tmp_path / "state"),
    }
    inputs = {p: [f"w{p}"] * 3 for p in range(partitions)}
    TestRunner.of(Count).add_input("in", inputs).add_config(config).run(timeout=60)


def test_a_task_is_never_handed_another_tasks_state(tmp_path: Path) -> None:
    run(tmp_path, 10)
    run(tmp_path, 10)  # the same tasks: their own state files
    with pytest.raises(ConfigError) as error:
        run(tmp_path, 11)  # "Partition 10" sorts before "Partition 2" and takes changelog partition 2
    text = str(error.value)
    assert "partition-2.duckdb" in text and "'Partition 2'" in text and "'Partition 10'" in text, text
