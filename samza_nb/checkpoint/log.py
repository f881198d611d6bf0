"""Checkpoints in a stream of the embedded durable log: what several container processes of one job share.

``task.checkpoint.factory = samza_nb.checkpoint.log.LogCheckpointManagerFactory``. The checkpoint system is
``task.checkpoint.system``, else ``job.default.system``, else ``log``; it must be a durable log system
(``systems.<name>.samza.factory`` unset for ``log``, or ``samza_nb.systems.log.LogSystemFactory``), whose
directory is ``systems.<name>.log.dir`` (default ``<job.logged.store.base.dir>/log``).

The stream is ``__samza_checkpoint_ver_1_for_<job.name>_<job.id>`` (``_`` → ``-``), one partition, with
Samza's checkpoint messages byte for byte, as the Kafka checkpoint topic
(:mod:`samza_nb.checkpoint.stream_format`). ``start`` reads it all and per task the last message of the
preferred version wins (the log keeps no timestamps: the live checkpoint max age plays no part);
``write_checkpoint`` appends and fsyncs before it returns. Appends are safe from
several processes at once (each container writes its own tasks' checkpoints).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.checkpoint.stream_format import CheckpointFormat, StreamCheckpointManager, checkpoint_topic
from samza_nb.config.system_defaults import default_system, log_directory
from samza_nb.errors import CheckpointError, ConfigError, SamzaError

if TYPE_CHECKING:
    from pathlib import Path

    from samza_nb.config.config import Config
    from samza_nb.systems.log import DurableLog

CHECKPOINT_SYSTEM_KEY: Final[str] = "task.checkpoint.system"


class LogCheckpointManager(StreamCheckpointManager):
    """Reads and writes the task checkpoints of one job on a durable log stream (see the module
    docstring). Failures of the log (a damaged file, a full disk) raise CheckpointError naming it."""

    def __init__(self, directory: Path, stream: str, checkpoint_format: CheckpointFormat) -> None:
        super().__init__(stream, checkpoint_format)
        self.directory = directory
        self.stream = stream
        self._log: DurableLog | None = None

    @property
    def stream_directory(self) -> Path:
        """Where the checkpoint stream's files are (absent until the first checkpoint manager started)."""
        return self.directory / self.stream

    async def start(self) -> None:
        """Create the stream if missing and read every checkpoint on it."""
        self._check_new()
        await asyncio.to_thread(self._start)
        self._state = "started"

    def _start(self) -> None:
        from samza_nb.systems.log import DurableLog

        try:
            log = DurableLog(self.directory)
            log.create_stream(self.stream, 1)
            for offset, key, value in log.read(self.stream, 0):
                self._table.apply(key, value, offset)
        except CheckpointError:
            raise
        except SamzaError as exc:
            raise CheckpointError(f"checkpoint stream {self.stream!r} in {self.directory}: {exc}") from exc
        self._log = log

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Append ``checkpoint`` as the task's latest (one message per write version, in order); durable
        (fsync) when this returns."""
        self._require_started("write_checkpoint")
        await self._append(f"the checkpoint of task {task_name!r}", self._messages(task_name, checkpoint))
        self._table.wrote(task_name, checkpoint)

    async def _append(self, what: str, messages: list[tuple[bytes, bytes | None]]) -> None:
        log = self._require_started("write_checkpoint")

        def write() -> None:
            log.append(self.stream, 0, [value for _, value in messages], [key for key, _ in messages])
            log.flush()

        try:
            await asyncio.to_thread(write)
        except SamzaError as exc:
            raise CheckpointError(f"writing {what} to {self.stream!r} in {self.directory}: {exc}") from exc

    async def stop(self) -> None:
        """Close the log. Idempotent."""
        self._state = "stopped"
        log, self._log = self._log, None
        if log is not None:
            await asyncio.to_thread(log.close)

    def _require_started(self, what: str) -> DurableLog:
        if self._state != "started" or self._log is None:
            raise self._not_started(what)
        return self._log

    def __str__(self) -> str:
        return f"durable log checkpoint manager of stream {self.stream!r} in {self.directory} ({self._state})"


class LogCheckpointManagerFactory:
    """``task.checkpoint.factory = samza_nb.checkpoint.log.LogCheckpointManagerFactory``."""

    def get_checkpoint_manager(self, config: Config) -> LogCheckpointManager:
        """A manager of the job's checkpoint stream on the checkpoint system (a durable log system)."""
        from samza_nb.systems.log import LogSystemFactory
        from samza_nb.systems.log.durable_log import check_stream_name
        from samza_nb.systems.registry import system_factory

        system = (config.get_str(CHECKPOINT_SYSTEM_KEY) or "").strip() or default_system(config)
        factory = system_factory(config, system)
        if not isinstance(factory, LogSystemFactory):
            factory_key = f"systems.{system}.samza.factory"
            raise ConfigError(
                f"{CHECKPOINT_SYSTEM_KEY}={system!r}: durable log checkpoints need a durable log system, but "
                f"{factory_key}={config.get_str(factory_key)!r}",
                key=CHECKPOINT_SYSTEM_KEY,
            )
        stream = checkpoint_topic(config.job_name(), config.job_id())
        try:
            check_stream_name(stream)
        except SamzaError as exc:
            raise ConfigError(
                f"job.name/job.id make an illegal checkpoint stream: {exc}", key="job.name"
            ) from None
        checkpoint_format = CheckpointFormat.from_config(config)
        return LogCheckpointManager(log_directory(config, system), stream, checkpoint_format)


__all__ = ["CHECKPOINT_SYSTEM_KEY", "LogCheckpointManager", "LogCheckpointManagerFactory"]
