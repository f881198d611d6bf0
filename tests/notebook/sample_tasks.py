"""Task classes importable by dotted path (``task.class = tests.notebook.sample_tasks.Collect``)."""

from __future__ import annotations

from typing import Any

SEEN: list[Any] = []


class Collect:
    """Appends every message value to SEEN."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        SEEN.append(envelope.message)
