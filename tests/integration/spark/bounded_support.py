"""Helpers of the bounded Spark stream tests: a job's config, a task that records what it reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config
from samza_nb.systems.spark.registry import registered_frames, unregister_dataframe

FACTORY = "samza_nb.systems.spark.SparkSystemFactory"


def job_config(base: Path, inputs: str = "spark.clicks", **extra: Any) -> Config:
    """A one-container job reading ``inputs`` of the Spark system ``spark`` from their oldest rows."""
    values: dict[str, Any] = {
        "job.name": "spark-bounded",
        "task.inputs": inputs,
        "systems.spark.samza.factory": FACTORY,
        "systems.spark.samza.offset.default": "oldest",
        "job.logged.store.base.dir": str(base),
    }
    values.update(extra)
    return Config(values)


class Seen:
    """One message a Recorder saw."""

    __slots__ = ("key", "message", "offset", "partition", "stream", "timestamp")

    def __init__(self, envelope: Any) -> None:
        self.stream: str = envelope.ssp.stream
        self.partition: int = envelope.ssp.partition
        self.offset: str = envelope.offset
        self.key = envelope.key
        self.message = envelope.message
        self.timestamp = envelope.timestamp

    def __repr__(self) -> str:
        return f"Seen({self.stream}#{self.partition}@{self.offset}, {self.key!r}, {self.message!r})"


class Recorder:
    """A task appending what it reads to ``log`` (shared across the task instances of a run)."""

    def __init__(self, log: list[Seen]) -> None:
        self.log = log

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.log.append(Seen(envelope))


def recorder(log: list[Seen]) -> Any:
    """A task factory of Recorders writing into ``log``."""
    return lambda: Recorder(log)


@pytest.fixture(autouse=True)
def no_registrations() -> Iterator[None]:
    """Every test starts and ends with no registered DataFrame."""
    for frame in registered_frames():
        unregister_dataframe(frame.stream, system=frame.system)
    yield
    for frame in registered_frames():
        unregister_dataframe(frame.stream, system=frame.system)
