"""Tasks and a checkpoint manager for multi-container tests: importable by the container processes."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path
from typing import Any

from samza_nb.checkpoint.checkpoint import Checkpoint
from samza_nb.config import Config
from samza_nb.errors import CheckpointError


class Record:
    """Appends ``<task> <pid> <stream> <offset> <message>`` to ``processed.log`` for every message; sleeps
    ``test.sleep.ms`` per message; fails on the message ``test.fail.on``."""

    def init(self, context: Any) -> None:
        self.task = context.task_name.replace(" ", "_")
        self.sleep = int(context.config.get_str("test.sleep.ms", "0") or 0) / 1000
        self.fail_on = context.config.get_str("test.fail.on", "")
        self.log = open("processed.log", "a")  # noqa: SIM115 (closed in close())

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        message = envelope.message
        if isinstance(message, bytes):
            message = message.decode()
        if self.fail_on and message == self.fail_on:
            raise ValueError(f"cannot process {message!r}")
        self.log.write(f"{self.task} {os.getpid()} {envelope.ssp.stream} {envelope.offset} {message}\n")
        self.log.flush()
        if self.sleep:
            time.sleep(self.sleep)

    def close(self) -> None:
        self.log.close()


class FileCheckpointManager:
    """One pickle file per task in ``test.checkpoint.dir`` (each task belongs to one process)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def register(self, task_name: str) -> None:
        pass

    async def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

    def _path(self, task_name: str) -> Path:
        return self.directory / (task_name.replace(" ", "_") + ".pickle")

    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        path = self._path(task_name)
        if not path.exists():
            return None
        checkpoint = pickle.loads(path.read_bytes())
        if not isinstance(checkpoint, Checkpoint):
            raise CheckpointError(f"{path} holds no checkpoint")
        return checkpoint

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        path = self._path(task_name)
        temporary = path.with_suffix(".tmp")
        temporary.write_bytes(pickle.dumps(checkpoint))
        temporary.replace(path)

    async def stop(self) -> None:
        pass


class FileCheckpointManagerFactory:
    """Builds a FileCheckpointManager on ``test.checkpoint.dir``."""

    def get_checkpoint_manager(self, config: Config) -> FileCheckpointManager:
        return FileCheckpointManager(Path(config.require("test.checkpoint.dir", "a directory")))
