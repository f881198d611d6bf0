"""Task classes importable by dotted path (``task.class = tests.notebook.sample_tasks.Collect``)."""

from __future__ import annotations

from typing import Any

from samza_nb.operators import StreamApplication, Windows

SEEN: list[Any] = []


class Collect:
    """Appends every message value to SEEN."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        SEEN.append(envelope.message)


def _count(message: Any, n: int) -> int:
    return n + 1


def _zero() -> int:
    return 0


def _user(message: Any) -> Any:
    return message["user"]


def _drop(pane: Any, collector: Any, coordinator: Any) -> None:
    pass


class ClicksPerUser(StreamApplication):
    """An application (``app.class = tests.notebook.sample_tasks.ClicksPerUser``): the clicks of each user
    per second of event time, in a tumbling window on the input ``clicks`` (each task windows its own
    partition)."""

    def describe(self, app: Any) -> None:
        window = Windows.tumbling(1000, init=_zero, fold=_count, key_fn=_user)
        app.get_input_stream("clicks").window(window, "per-second").sink(_drop, "drop")


class FailOnThree:
    """Fails on the message ``{"n": 3}`` (``task.class = tests.notebook.sample_tasks.FailOnThree``)."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.message["n"] == 3:
            raise ValueError("bad n")
