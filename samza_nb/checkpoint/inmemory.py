"""Checkpoints kept in this process only: for tests, the TestRunner and throwaway notebook jobs."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from samza_nb.errors import CheckpointError

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.config import Config


class InMemoryCheckpointManager:
    """Keeps the last checkpoint of each task in a dict; lost when the process ends.

    Managers of one namespace (``task.checkpoint.inmemory.namespace``, default ``<job.name>-<job.id>``)
    share their checkpoints, so a job run twice in one process resumes where it stopped.
    """

    def __init__(self, store: dict[str, Checkpoint] | None = None) -> None:
        self.checkpoints: dict[str, Checkpoint] = store if store is not None else {}
        self._tasks: set[str] = set()
        self._started = False
        self.writes = 0

    def register(self, task_name: str) -> None:
        """Announce a task whose checkpoints this manager reads and writes."""
        self._tasks.add(task_name)

    async def start(self) -> None:
        """Ready to read and write."""
        self._started = True

    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        """The task's last written checkpoint, or None."""
        self._check(task_name)
        return self.checkpoints.get(task_name)

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Replace the task's checkpoint."""
        self._check(task_name)
        self.checkpoints[task_name] = checkpoint
        self.writes += 1

    async def forget_all(self) -> list[str]:
        """Forget every task's checkpoint (of the namespace); the tasks that had one."""
        if not self._started:
            raise CheckpointError("the in-memory checkpoint manager is not started")
        tasks = sorted(self.checkpoints)
        self.checkpoints.clear()
        return tasks

    async def stop(self) -> None:
        """No more reads or writes."""
        self._started = False

    def _check(self, task_name: str) -> None:
        if not self._started:
            raise CheckpointError("the in-memory checkpoint manager is not started")
        if task_name not in self._tasks:
            raise CheckpointError(f"task {task_name!r} was not registered with the checkpoint manager")


class InMemoryCheckpointManagerFactory:
    """``task.checkpoint.factory = samza_nb.checkpoint.inmemory.InMemoryCheckpointManagerFactory``."""

    _stores: dict[str, dict[str, Checkpoint]] = {}
    _lock = threading.Lock()

    def get_checkpoint_manager(self, config: Config) -> InMemoryCheckpointManager:
        """A manager sharing the checkpoints of its namespace."""
        default = f"{config.job_name()}-{config.job_id()}"
        namespace = config.get_str("task.checkpoint.inmemory.namespace", default)
        with self._lock:
            store = self._stores.setdefault(namespace, {})
        return InMemoryCheckpointManager(store)
