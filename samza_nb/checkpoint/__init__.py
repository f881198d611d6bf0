"""Checkpoints: the Checkpoint value, the CheckpointManager protocol, and the embedded DuckDB default.

``load_checkpoint_manager(config)`` builds the manager named by ``task.checkpoint.factory`` (default
:class:`~samza_nb.checkpoint.duckdb.DuckDBCheckpointManagerFactory`, a DuckDB file per job under
``job.logged.store.base.dir``).
"""

from __future__ import annotations

from samza_nb.api.checkpoint import Checkpoint
from samza_nb.checkpoint.base import (
    CHECKPOINT_FACTORY_KEY,
    DEFAULT_CHECKPOINT_FACTORY,
    CheckpointManager,
    CheckpointManagerFactory,
    load_checkpoint_manager,
)
from samza_nb.checkpoint.duckdb import (
    DuckDBCheckpointManager,
    DuckDBCheckpointManagerFactory,
    job_database_path,
)

__all__ = [
    "CHECKPOINT_FACTORY_KEY",
    "DEFAULT_CHECKPOINT_FACTORY",
    "Checkpoint",
    "CheckpointManager",
    "CheckpointManagerFactory",
    "DuckDBCheckpointManager",
    "DuckDBCheckpointManagerFactory",
    "job_database_path",
    "load_checkpoint_manager",
]
