"""Which system a job uses when it names none, and where the embedded durable log keeps its files.

The system named ``log`` is the embedded durable log (unless ``systems.log.samza.factory`` says
otherwise): it holds a job's changelogs, coordinator stream and checkpoints when ``job.default.system``
is not set.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from samza_nb.config.config import Config

DEFAULT_LOG_SYSTEM: Final = "log"
"""The name of the system that is the embedded durable log unless configured otherwise."""


def default_system(config: Config) -> str:
    """``job.default.system`` when set, else :data:`DEFAULT_LOG_SYSTEM`."""
    value = (config.get_str("job.default.system") or "").strip()
    return value or DEFAULT_LOG_SYSTEM


def log_directory(config: Config, system: str) -> Path:
    """The directory of durable log system ``system``: ``systems.<system>.log.dir``, else
    ``<job.logged.store.base.dir>/log`` (absolute)."""
    value = (config.get_str(f"systems.{system}.log.dir") or "").strip()
    if value:
        return Path(value).expanduser().absolute()
    base = (config.get_str("job.logged.store.base.dir") or "").strip() or "."
    return (Path(base).expanduser() / "log").absolute()


__all__ = ["DEFAULT_LOG_SYSTEM", "default_system", "log_directory"]
