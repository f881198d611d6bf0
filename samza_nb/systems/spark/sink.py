"""A Spark system's outputs: parquet per task per commit, and read_output (being built: issue 14)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.config import Config


def read_output(spark: Any, stream: str, config: Config, *, system: str = "spark") -> Any:
    """The messages the job wrote to ``SystemStream(system, stream)``, as a DataFrame of ``spark``."""
    raise NotImplementedError


__all__ = ["read_output"]
