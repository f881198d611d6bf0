"""Who wrote a changelog partition, and from where its current generation starts: one marker record.

A task that starts with no state (a first run, or a reset: no checkpoint, no local state) begins a new
generation of its stores: before any write it sends one marker record to each changelog partition it
writes, key :data:`MARKER_KEY`, value a small JSON map naming the job (``job.name``, ``job.id``), the task
and the generation. Nothing else is sent per message, and compaction keeps the latest marker of a
partition (one key).

A restore reads the records after the last marker it meets only: a marker of this job drops what was
restored before it (an older generation: the reset's "the changelog starts anew"); when the last marker
met belongs to another job (the same changelog topic configured for two jobs), the restore is refused
with :class:`ForeignChangelogError` naming the topic and the owner, instead of replaying its state. A
changelog written before markers existed (no marker in the range read) restores as before.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass
from typing import Final

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import SamzaError

MARKER_KEY: Final[bytes] = b"\x00samza_nb.changelog-generation\x00"
"""The key of a generation marker (no serde of a store makes it from a user's key in practice)."""


class ForeignChangelogError(SamzaError):
    """A changelog partition holds the state of another job (its last generation marker names it)."""


@dataclass(frozen=True)
class GenerationMarker:
    """One marker: the job (``job_name``, ``job_id``) and task that began generation ``generation``."""

    job_name: str
    job_id: str
    task: str
    generation: str

    @classmethod
    def new(cls, job_name: str, job_id: str, task: str) -> GenerationMarker:
        """A marker of a generation beginning now (its id: start time in ms and a random part)."""
        return cls(job_name, job_id, task, f"{int(time.time() * 1000)}-{secrets.token_hex(4)}")

    def encode(self) -> bytes:
        """The marker record's value."""
        return json.dumps(
            {
                "job.name": self.job_name,
                "job.id": self.job_id,
                "task": self.task,
                "generation": self.generation,
            },
            separators=(",", ":"),
        ).encode()

    @classmethod
    def decode(cls, ssp: SystemStreamPartition, offset: str, value: bytes | None) -> GenerationMarker:
        """The marker in a record's ``value``; a SamzaError naming the partition and offset when it is not
        one."""
        try:
            data = json.loads(value or b"")
            return cls(str(data["job.name"]), str(data["job.id"]), str(data["task"]), str(data["generation"]))
        except (ValueError, TypeError, KeyError) as exc:
            raise SamzaError(
                f"changelog {ssp} offset {offset}: a generation marker that cannot be read ({exc})"
            ) from None

    def owner(self) -> str:
        """The owner as a person reads it."""
        return (
            f"job {self.job_name!r} (job.id {self.job_id!r}, task {self.task!r}, "
            f"generation {self.generation})"
        )

    def refuse(
        self, ssp: SystemStreamPartition, store: str, job_name: str, job_id: str
    ) -> ForeignChangelogError:
        """The error for restoring store ``store`` of job ``job_name``/``job_id`` from ``ssp`` when this
        marker, another job's, is the last one before the state to restore."""
        return ForeignChangelogError(
            f"changelog {ssp.system}.{ssp.stream} partition {ssp.partition} of store {store!r} was last "
            f"written by {self.owner()}, not by job {job_name!r} (job.id {job_id!r}): its state is not "
            f"restored; give this job's store its own changelog (stores.{store}.changelog)"
        )

    def is_of(self, job_name: str, job_id: str) -> bool:
        """True when this marker is of job ``job_name``/``job_id``."""
        return self.job_name == job_name and self.job_id == job_id


__all__ = ["MARKER_KEY", "ForeignChangelogError", "GenerationMarker"]
