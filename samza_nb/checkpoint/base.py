"""The CheckpointManager protocol, its factory protocol, and loading the configured factory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from samza_nb.config.plugins import import_dotted
from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from samza_nb.api.checkpoint import Checkpoint
    from samza_nb.config.config import Config

CHECKPOINT_FACTORY_KEY = "task.checkpoint.factory"
"""Config key naming the checkpoint manager factory class (a dotted path)."""

DEFAULT_CHECKPOINT_FACTORY = "samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory"
"""The factory used when ``task.checkpoint.factory`` is not set: checkpoints in the job's DuckDB file."""

MULTI_CONTAINER_CHECKPOINT_FACTORY = "samza_nb.checkpoint.log.LogCheckpointManagerFactory"
"""The default when ``job.container.count`` > 1: the durable log, which several processes append to safely
(one DuckDB file cannot be written by several processes)."""


@runtime_checkable
class CheckpointManager(Protocol):
    """Durable storage of each task's last :class:`Checkpoint`.

    Lifecycle: ``register`` every task the container runs, then ``start`` once, then any number of
    ``read_last_checkpoint``/``write_checkpoint``, then ``stop``. Reading or writing before ``start`` or
    after ``stop`` raises :class:`~samza_nb.errors.CheckpointError`, as does any failure of the backing
    store; an implementation never silently drops a write.
    """

    def register(self, task_name: str) -> None:
        """Announce a task whose checkpoints this manager will read and write (before ``start``)."""
        ...

    async def start(self) -> None:
        """Open and validate the backing store; after this, reads and writes are allowed."""
        ...

    async def read_last_checkpoint(self, task_name: str) -> Checkpoint | None:
        """The last checkpoint written for ``task_name``, or None if none was ever written."""
        ...

    async def write_checkpoint(self, task_name: str, checkpoint: Checkpoint) -> None:
        """Replace ``task_name``'s checkpoint with ``checkpoint``, durably, by the time this returns.

        The write is all-or-nothing: an SSP or store absent from ``checkpoint`` is absent afterwards.
        """
        ...

    async def stop(self) -> None:
        """Release the backing store. Further reads and writes raise CheckpointError."""
        ...


@runtime_checkable
class ForgettingCheckpointManager(CheckpointManager, Protocol):
    """A checkpoint manager that can delete every task's checkpoint it holds: what a reset of the job
    (``samza-nb reset``, ``%samza_checkpoints --reset``) needs of it."""

    async def forget_all(self) -> list[str]:
        """Delete the checkpoint of every task the backing store holds (registered or not), durably, by the
        time this returns; the names of the tasks that had one. Between ``start`` and ``stop``."""
        ...


@runtime_checkable
class CheckpointManagerFactory(Protocol):
    """Builds the job's :class:`CheckpointManager` from its config; instantiated with no arguments."""

    def get_checkpoint_manager(self, config: Config) -> CheckpointManager:
        """A new, not yet started, checkpoint manager for the job described by ``config``."""
        ...


def checkpoint_factory_path(config: Config) -> str:
    """The dotted path of the job's checkpoint manager factory: ``task.checkpoint.factory``, else DuckDB for
    a job of one container and the durable log for ``job.container.count`` > 1. DuckDB named explicitly for
    several containers is a ConfigError naming both keys."""
    containers = config.get_int("job.container.count", 1)
    path = (config.get_str(CHECKPOINT_FACTORY_KEY, "") or "").strip()
    if not path:
        return DEFAULT_CHECKPOINT_FACTORY if containers <= 1 else MULTI_CONTAINER_CHECKPOINT_FACTORY
    if containers > 1 and path == DEFAULT_CHECKPOINT_FACTORY:
        raise ConfigError(
            f"{CHECKPOINT_FACTORY_KEY}={path} cannot hold the checkpoints of "
            f"job.container.count={containers} containers (one DuckDB file is written by one process); "
            "unset it (the durable log, "
            f"{MULTI_CONTAINER_CHECKPOINT_FACTORY}, is the default then) or use the Kafka checkpoint manager",
            key=CHECKPOINT_FACTORY_KEY,
        )
    return path


def load_checkpoint_manager(config: Config) -> CheckpointManager:
    """The checkpoint manager of the factory named by ``task.checkpoint.factory`` (default: see
    :func:`checkpoint_factory_path`).

    The dotted path is imported, called with no arguments (a class is instantiated), and its
    ``get_checkpoint_manager(config)`` is returned, not yet started. A path that cannot be imported, an
    object that cannot be built with no arguments, or one without ``get_checkpoint_manager``, raises
    :class:`ConfigError` naming the key and the path.
    """
    path = checkpoint_factory_path(config)
    target = import_dotted(path, CHECKPOINT_FACTORY_KEY)
    if not callable(target):
        raise ConfigError(
            f"{CHECKPOINT_FACTORY_KEY}={path!r}: {target!r} is not a class that can be instantiated",
            key=CHECKPOINT_FACTORY_KEY,
        )
    try:
        factory = target()
    except Exception as exc:
        raise ConfigError(
            f"{CHECKPOINT_FACTORY_KEY}={path!r}: could not instantiate it with no arguments: {exc!r}",
            key=CHECKPOINT_FACTORY_KEY,
        ) from exc
    if not isinstance(factory, CheckpointManagerFactory):
        raise ConfigError(
            f"{CHECKPOINT_FACTORY_KEY}={path!r} is not a checkpoint manager factory: "
            "it has no get_checkpoint_manager(config) method",
            key=CHECKPOINT_FACTORY_KEY,
        )
    manager = factory.get_checkpoint_manager(config)
    if not isinstance(manager, CheckpointManager):
        raise ConfigError(
            f"{CHECKPOINT_FACTORY_KEY}={path!r}: get_checkpoint_manager returned {manager!r}, which lacks "
            "the CheckpointManager methods (register, start, read_last_checkpoint, write_checkpoint, stop)",
            key=CHECKPOINT_FACTORY_KEY,
        )
    return manager


__all__ = [
    "CHECKPOINT_FACTORY_KEY",
    "DEFAULT_CHECKPOINT_FACTORY",
    "MULTI_CONTAINER_CHECKPOINT_FACTORY",
    "CheckpointManager",
    "CheckpointManagerFactory",
    "ForgettingCheckpointManager",
    "checkpoint_factory_path",
    "load_checkpoint_manager",
]
