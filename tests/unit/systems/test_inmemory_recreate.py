"""An in-memory stream made anew (create_stream(..., replace=True)): allowed when no running job reads it,
refused with one line naming the stream and the job while one does."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb import Config, SamzaError
from samza_nb.errors import StreamInUseError, SystemProducerError
from samza_nb.runtime import LocalJobRunner
from samza_nb.systems.inmemory.system import InMemoryBroker
from tests.eventually import eventually


@pytest.fixture
def namespace() -> str:
    return f"t-{uuid.uuid4().hex}"


def filled(broker: InMemoryBroker, values: list[str]) -> None:
    """What a notebook's data cell does: create the stream, fill it, end it."""
    broker.create_stream("clicks", 2, replace=True)
    for value in values:
        broker.send("clicks", value, key=value)
    broker.end_stream("clicks")


def test_an_ended_stream_no_job_reads_is_made_anew_by_the_same_cell(namespace: str) -> None:
    broker = InMemoryBroker.named(namespace)
    filled(broker, ["a", "b", "c"])
    first = broker.incarnation("clicks")
    filled(broker, ["d", "e"])  # the cell again: no "has ended" error
    assert sorted(v for part in broker.read("clicks").values() for v in part) == ["d", "e"]
    assert sum(int(m.upcoming) for m in broker.metadata("clicks").values()) == 2, "offsets start at 0"
    assert broker.incarnation("clicks") != first, "a stream made anew is another incarnation"
    broker.create_stream("clicks", 3, replace=True)  # another partition count is fine too
    assert broker.partition_count("clicks") == 3


def test_without_replace_an_ended_stream_says_how_to_make_it_anew(namespace: str) -> None:
    broker = InMemoryBroker.named(namespace)
    broker.create_stream("clicks", 2)
    broker.end_stream("clicks")
    broker.create_stream("clicks", 2)  # an existing stream: kept as it is
    with pytest.raises(SystemProducerError, match=r"replace=True\) makes the stream anew"):
        broker.send("clicks", "x", partition=0)
    with pytest.raises(SamzaError, match=r"exists with 2 partitions, not 3 .*replace=True"):
        broker.create_stream("clicks", 3)


class Counting:
    seen: list[Any]

    def __init__(self) -> None:
        self.seen = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.seen.append(envelope.message)


def test_a_stream_a_running_job_reads_cannot_be_made_anew_until_it_stops(
    namespace: str, tmp_path: Path
) -> None:
    broker = InMemoryBroker.named(namespace, "mem")
    broker.create_stream("clicks", 2)
    broker.send("clicks", "a", partition=0)
    config = Config(
        {
            "job.name": "clicks-job",
            "task.inputs": "mem.clicks",
            "systems.mem.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
            "systems.mem.inmemory.namespace": namespace,
            "systems.mem.samza.offset.default": "oldest",
            "job.logged.store.base.dir": str(tmp_path),
        }
    )
    task = Counting()
    runner = LocalJobRunner(config, task)
    thread = threading.Thread(target=runner.run, kwargs={"timeout": 60})
    thread.start()
    try:
        eventually(lambda: task.seen == ["a"])
        assert broker.readers("clicks") == ["clicks-job"]
        with pytest.raises(StreamInUseError) as caught:
            broker.create_stream("clicks", 2, replace=True)
        assert str(caught.value) == (
            "in-memory stream mem.clicks cannot be recreated while running job 'clicks-job' reads it: "
            "stop the job first"
        )
        assert "\n" not in str(caught.value)
        broker.send("clicks", "b", partition=1)  # the stream is untouched and still read
        eventually(lambda: task.seen == ["a", "b"])
    finally:
        runner.stop()
        thread.join(30)
    assert not thread.is_alive()
    assert broker.readers("clicks") == []
    filled(broker, ["c"])  # the job stopped: the stream can be made anew
    assert broker.read("clicks") in ({0: ["c"], 1: []}, {0: [], 1: ["c"]})
