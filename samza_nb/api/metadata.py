"""Partition metadata an input system reports: where a partition begins, ends and continues, and where a
consumer moved a partition whose position no longer exists (:class:`OffsetReset`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStreamPartition


@dataclass(frozen=True, slots=True)
class SSPMetadata:
    """Offsets of one partition: ``oldest`` and ``newest`` existing message (None when empty) and
    ``upcoming``, the offset the next written message will get."""

    oldest: str | None
    newest: str | None
    upcoming: str | None


@dataclass(frozen=True, slots=True)
class OffsetReset:
    """A consumer moved one partition to another offset because the offset it was to read next does not
    exist there (a checkpoint beyond the log's end after the log, topic or file was recreated shorter, or
    older than its oldest message after retention): ``from_offset`` the offset it was to read,
    ``to_offset`` the one it reads next, ``last`` the offset counted as processed from then on until a
    message is (the one before ``to_offset``, "-1" before offset 0: what the next checkpoint writes),
    ``reason`` why in a phrase ("is beyond the log's end 9") and ``policy`` the setting that chose
    ``to_offset`` (``key=value``)."""

    ssp: SystemStreamPartition
    from_offset: str
    to_offset: str
    last: str
    reason: str
    policy: str

    def describe(self) -> str:
        """One line: ``kafka.t#0: offset 31 is beyond the log's end 9; reset to offset 0 (key=value)``."""
        return (
            f"{self.ssp}: offset {self.from_offset} {self.reason}; "
            f"reset to offset {self.to_offset} ({self.policy})"
        )
