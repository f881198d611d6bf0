"""Where a Spark system's fed (streaming) inputs live, and the positions their consumers publish.

A streaming DataFrame registered on Spark system ``s`` is fed by the driver into a durable log at
``<job.logged.store.base.dir>/<job.name>-<job.id>/spark-stream/<s>/log`` (stream name = the registered
stream); Spark's
``checkpointLocation`` is ``.../spark-stream/<s>/checkpoints/<stream>``. Keys and values cross that log
pickled (:data:`FED_SERDE`): the feed and the consumer agree on it whatever the system's serde keys say.

Back-pressure needs the consumers' progress on the driver: each consumer of a fed partition publishes
its position (the offset of the next message it hands out) in ``.../spark-stream/<s>/positions/<stream>.<n>``
(16 bytes written in place: the position and its complement, so a torn read is recognised and retried).
A :class:`~samza_nb.systems.log.wake.FlushWaiter` over those files wakes the feed when a position moves,
in this process (signalled) or another (inotify).
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Final

from samza_nb.config import Config
from samza_nb.serde.builtin import PickleSerde
from samza_nb.systems.log.wake import notify_flushed
from samza_nb.systems.spark.settings import job_files_directory

if TYPE_CHECKING:
    from samza_nb.systems.log.durable_log import DurableLog

MAX_BACKLOG_DEFAULT: Final = 100_000
FED_SERDE: Final = PickleSerde()
"""The serde of keys and values in a fed stream's log (the feed encodes, the consumer decodes)."""

_POSITION = struct.Struct("<QQ")
_MASK = 0xFFFFFFFFFFFFFFFF


def stream_root(config: Config, system: str) -> Path:
    """``<job.logged.store.base.dir>/<job.name>-<job.id>/spark-stream/<system>`` (absolute)."""
    return job_files_directory(config) / "spark-stream" / system


def fed_log_dir(config: Config, system: str) -> Path:
    """The durable log directory holding the fed streams of ``system``."""
    return stream_root(config, system) / "log"


def checkpoint_dir(config: Config, system: str, stream: str) -> Path:
    """Spark's ``checkpointLocation`` of the query feeding ``stream``."""
    return stream_root(config, system) / "checkpoints" / stream


def positions_dir(config: Config, system: str) -> Path:
    """Where the consumers of ``system``'s fed streams publish their positions."""
    return stream_root(config, system) / "positions"


def max_backlog(config: Config, system: str) -> int:
    """``systems.<system>.spark.max.backlog`` (default 100,000): unconsumed messages of a fed stream above
    which its feed waits."""
    return config.get_int(f"systems.{system}.spark.max.backlog", MAX_BACKLOG_DEFAULT)


def fed_serdes_config(system: str) -> Config:
    """A config whose serdes for ``system`` are :data:`FED_SERDE` (pickle), for the delegated log
    consumer."""
    return Config(
        {f"systems.{system}.samza.key.serde": "pickle", f"systems.{system}.samza.msg.serde": "pickle"}
    )


class PositionFile:
    """The published position of one fed partition (the next offset its consumer hands out)."""

    def __init__(self, directory: Path, stream: str, partition: int) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{stream}.{partition}"
        self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)

    def write(self, position: int) -> None:
        """Publish ``position`` (in place, so watchers of the file see the write) and wake this process's
        waiters."""
        os.pwrite(self._fd, _POSITION.pack(position, position ^ _MASK), 0)
        notify_flushed(self.path)

    def read(self) -> int:
        """The published position (0 when none was yet)."""
        for _ in range(100):
            data = os.pread(self._fd, _POSITION.size, 0)
            if len(data) < _POSITION.size:
                return 0
            position, check = _POSITION.unpack(data)
            if position ^ _MASK == check:
                return int(position)
        return 0  # pragma: no cover - a writer tearing the same 16 bytes 100 times in a row

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def backlog(log: DurableLog, positions: list[PositionFile], stream: str) -> int:
    """Flushed messages of ``stream`` its consumers have not been handed yet (``positions[n]`` is
    partition n's)."""
    return sum(max(0, log.upcoming(stream, n) - p.read()) for n, p in enumerate(positions))


__all__ = [
    "FED_SERDE",
    "MAX_BACKLOG_DEFAULT",
    "PositionFile",
    "backlog",
    "checkpoint_dir",
    "fed_log_dir",
    "fed_serdes_config",
    "max_backlog",
    "positions_dir",
    "stream_root",
]
