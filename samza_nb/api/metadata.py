"""Partition metadata an input system reports: where a partition begins, ends and continues."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class SSPMetadata:
    """Offsets of one partition: ``oldest`` and ``newest`` existing message (None when empty) and
    ``upcoming``, the offset the next written message will get."""

    oldest: str | None
    newest: str | None
    upcoming: str | None
