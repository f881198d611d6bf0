"""Checkpoints on a durable log stream written by several processes at once: each task's last one wins."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from samza_nb import SystemStreamPartition
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.systems.log import DurableLog
from tests.unit.checkpoint.test_log import STREAM, manager

ROOT = Path(__file__).parents[3]

WRITER = """
import asyncio, sys
from samza_nb import Config, SystemStreamPartition
from samza_nb.api.checkpoint import Checkpoint
from samza_nb.checkpoint.log import LogCheckpointManagerFactory

async def main(base, task, count):
    config = Config({"job.name": "my_job", "job.logged.store.base.dir": base})
    m = LogCheckpointManagerFactory().get_checkpoint_manager(config)
    m.register(task)
    await m.start()
    ssp = SystemStreamPartition("kafka", "in", int(task.split()[-1]))
    for offset in range(count):
        await m.write_checkpoint(task, Checkpoint({ssp: str(offset)}))
    await m.stop()

asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
"""


def test_two_processes_write_checkpoints_of_their_own_tasks(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen([sys.executable, "-c", textwrap.dedent(WRITER), str(tmp_path), task, "150"], env=env)
        for task in ("Partition 0", "Partition 1")
    ]
    assert [w.wait(60) for w in writers] == [0, 0]

    async def read() -> dict[str, Checkpoint | None]:
        m = manager(tmp_path, "Partition 0", "Partition 1")
        await m.start()
        result = {task: await m.read_last_checkpoint(task) for task in ("Partition 0", "Partition 1")}
        await m.stop()
        return result

    last = asyncio.run(read())
    assert last == {
        "Partition 0": Checkpoint({SystemStreamPartition("kafka", "in", 0): "149"}),
        "Partition 1": Checkpoint({SystemStreamPartition("kafka", "in", 1): "149"}),
    }
    with DurableLog(tmp_path / "log") as log:
        records = list(log.read(STREAM, 0))
    assert [offset for offset, _, _ in records] == list(range(600))  # v1 and v2 of each
