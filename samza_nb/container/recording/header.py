"""The header of a recorded schedule (``header.json``): the format and its version, the job, the task and
partition tables (with the starting checkpoint) and the config keys the schedule depends on
(:mod:`samza_nb.container.recording.recording` describes the files)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import SamzaError

if TYPE_CHECKING:
    from pathlib import Path

FORMAT = "samza-nb schedule"
VERSION = 3
READS = (1, 2, 3)
"""The versions this reads."""


@dataclass(frozen=True)
class PartitionEntry:
    """One row of the partition table: the partition, its task's index, where the recorded run started it
    (``start``) and the checkpointed offset before that (``last``, None without one)."""

    ssp: SystemStreamPartition
    task: int
    start: str
    last: str | None


@dataclass(frozen=True)
class Header:
    """What ``header.json`` holds."""

    job: tuple[str, str]
    tasks: tuple[str, ...]
    partitions: tuple[PartitionEntry, ...]
    config: Mapping[str, str]
    version: int = VERSION

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``header.json``."""
        return {
            "format": FORMAT,
            "version": self.version,
            "job": {"name": self.job[0], "id": self.job[1]},
            "tasks": list(self.tasks),
            "partitions": [
                {
                    "system": p.ssp.system,
                    "stream": p.ssp.stream,
                    "partition": p.ssp.partition,
                    "task": p.task,
                    "start": p.start,
                    "last": p.last,
                }
                for p in self.partitions
            ],
            "config": dict(self.config),
        }

    @classmethod
    def from_json(cls, data: Any, where: Path) -> Header:
        """Read a ``header.json`` object; a SamzaError naming the file when it is not one."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise SamzaError(f"{where} is not the header of a samza-nb schedule recording")
        version = data.get("version")
        if version not in READS:
            raise SamzaError(
                f"{where}: recording format version {version!r}; this reads "
                + " and ".join(str(v) for v in READS)
            )
        try:
            return cls(
                (str(data["job"]["name"]), str(data["job"]["id"])),
                tuple(str(t) for t in data["tasks"]),
                tuple(
                    PartitionEntry(
                        SystemStreamPartition(p["system"], p["stream"], int(p["partition"])),
                        int(p["task"]),
                        str(p["start"]),
                        None if p["last"] is None else str(p["last"]),
                    )
                    for p in data["partitions"]
                ),
                {str(k): str(v) for k, v in data["config"].items()},
                int(version),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SamzaError(f"{where}: malformed recording header ({exc!r})") from exc


__all__ = ["FORMAT", "READS", "VERSION", "Header", "PartitionEntry"]
