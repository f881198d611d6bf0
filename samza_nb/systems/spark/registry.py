"""DataFrames registered as streams of a Spark system, in this (the driver's) process.

``register_dataframe("clicks", df, key="user", timestamp="ts", partitions=4)`` makes ``df`` the stream
``clicks`` of the Spark system ``spark`` (docs/architecture.md §13). The registry lives in the process that
registers: the driver (a notebook's kernel, the CLI, the Spark runner's driver) writes a bounded DataFrame
once into the job's directory, or feeds a streaming one into the durable log, before the containers read
it; containers elsewhere (processes, executors) read what was written and never see the DataFrame.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

from samza_nb.errors import ConfigError

DEFAULT_SYSTEM = "spark"
"""The system a DataFrame is registered on when none is named."""


@dataclass(frozen=True)
class RegisteredFrame:
    """One registered DataFrame and how its rows become messages: ``key`` / ``value`` / ``timestamp`` name
    columns (``value`` None: the message is the row as a dict); ``partitions`` N: repartitioned by the key
    column into N partitions, sorted within each by the timestamp column when there is one (None: the
    DataFrame's own partitioning; for a streaming DataFrame, 1)."""

    system: str
    stream: str
    frame: Any
    key: str | None = None
    value: str | None = None
    timestamp: str | None = None
    partitions: int | None = None

    @property
    def streaming(self) -> bool:
        """True for a streaming DataFrame (``df.isStreaming``)."""
        return bool(self.frame.isStreaming)


_lock = threading.Lock()
_frames: dict[tuple[str, str], RegisteredFrame] = {}


def register_dataframe(
    stream: str,
    df: Any,
    *,
    key: str | None = None,
    value: str | None = None,
    timestamp: str | None = None,
    partitions: int | None = None,
    system: str = DEFAULT_SYSTEM,
) -> RegisteredFrame:
    """Make ``df`` (a pyspark DataFrame, bounded or streaming) the stream ``stream`` of Spark system
    ``system``, replacing an earlier registration of that stream. Columns named that ``df`` lacks, a
    ``partitions`` below 1, or ``partitions`` without ``key`` are a ConfigError naming the argument."""
    if not stream or not isinstance(stream, str):
        raise ConfigError(f"register_dataframe: stream must be a non-empty str, got {stream!r}")
    columns = list(getattr(df, "columns", None) or [])
    if not hasattr(df, "isStreaming"):
        raise ConfigError(f"register_dataframe({stream!r}): df must be a pyspark DataFrame, got {type(df)!r}")
    for argument, column in (("key", key), ("value", value), ("timestamp", timestamp)):
        if column is not None and column not in columns:
            raise ConfigError(
                f"register_dataframe({stream!r}): {argument}={column!r} is not a column of the DataFrame "
                f"(columns: {', '.join(columns) or 'none'})"
            )
    if partitions is not None:
        if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
            raise ConfigError(
                f"register_dataframe({stream!r}): partitions must be an int >= 1, got {partitions!r}"
            )
        if key is None and not df.isStreaming:
            raise ConfigError(
                f"register_dataframe({stream!r}): partitions={partitions} repartitions by the key column; "
                "name it with key="
            )
    frame = RegisteredFrame(system, stream, df, key, value, timestamp, partitions)
    with _lock:
        _frames[(system, stream)] = frame
    return frame


def unregister_dataframe(stream: str, *, system: str = DEFAULT_SYSTEM) -> None:
    """Forget the DataFrame registered as ``stream`` (nothing when none is)."""
    with _lock:
        _frames.pop((system, stream), None)


def registered_frame(system: str, stream: str) -> RegisteredFrame | None:
    """The DataFrame registered as ``stream`` of ``system`` in this process, if any."""
    with _lock:
        return _frames.get((system, stream))


def registered_frames() -> list[RegisteredFrame]:
    """Every registration in this process."""
    with _lock:
        return list(_frames.values())


__all__ = [
    "DEFAULT_SYSTEM",
    "RegisteredFrame",
    "register_dataframe",
    "registered_frame",
    "registered_frames",
    "unregister_dataframe",
]
