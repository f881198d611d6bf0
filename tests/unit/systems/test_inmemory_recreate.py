"""An in-memory stream made anew (create_stream run again, or with replace=True): allowed when no running job
reads it (with a one-line note unless replace=True), refused with one line naming the stream and the job while
one does; the system's own streams (ensure_stream) are kept as they are."""

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


def test_a_data_cell_run_again_makes_its_stream_anew_with_a_one_line_note(
    namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    broker = InMemoryBroker.named(namespace, "mem")

    def cell(values: list[str], end: bool) -> None:  # a teacher's data cell, without replace=True
        broker.create_stream("clicks", 2)
        for value in values:
            broker.send("clicks", value, key=value)
        if end:
            broker.end_stream("clicks")

    cell(["a", "b", "c"], end=True)
    assert capsys.readouterr().out == ""
    first = broker.incarnation("clicks")
    cell(["d", "e"], end=True)  # the cell again: no "has ended" error
    assert capsys.readouterr().out == (
        "in-memory stream mem.clicks made anew (no running job reads it): its 3 old messages dropped\n"
    )
    assert sorted(v for part in broker.read("clicks").values() for v in part) == ["d", "e"]
    assert broker.incarnation("clicks") != first
    cell(["f"], end=False)  # a stream that holds messages is made anew too, ended or not
    cell(["g"], end=False)
    assert capsys.readouterr().out.count("made anew") == 2
    assert sorted(v for part in broker.read("clicks").values() for v in part) == ["g"], "not doubled"
    broker.create_stream("clicks", 3)  # another partition count: made anew with it
    assert broker.partition_count("clicks") == 3
    assert "its 1 old message dropped" in capsys.readouterr().out


def test_a_stream_as_new_is_kept_and_the_systems_own_streams_are_never_made_anew(namespace: str) -> None:
    broker = InMemoryBroker.named(namespace, "mem")
    broker.create_stream("clicks", 2)
    first = broker.incarnation("clicks")
    broker.create_stream("clicks", 2)  # empty and not ended: as a new one would be
    assert broker.incarnation("clicks") == first
    broker.send("clicks", "x", partition=0)
    broker.ensure_stream("clicks", 2)  # outputs, changelogs, intermediate streams: kept as they are
    assert broker.read("clicks") == {0: ["x"], 1: []}
    assert broker.incarnation("clicks") == first
    broker.end_stream("clicks")
    with pytest.raises(SystemProducerError, match=r"create_stream\('clicks', 2\) makes the stream anew"):
        broker.send("clicks", "y", partition=0)
    with pytest.raises(SamzaError, match=r"exists with 2 partitions, not 3$"):
        broker.ensure_stream("clicks", 3)


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
        for replace in (True, False):  # the data cell again, with or without replace=True
            with pytest.raises(StreamInUseError) as caught:
                broker.create_stream("clicks", 2, replace=replace)
            assert str(caught.value) == (
                "in-memory stream mem.clicks cannot be recreated while running job 'clicks-job' reads it: "
                "stop the job first"
            )
        broker.send("clicks", "b", partition=1)  # the stream is untouched and still read
        eventually(lambda: task.seen == ["a", "b"])
    finally:
        runner.stop()
        thread.join(30)
    assert not thread.is_alive()
    assert broker.readers("clicks") == []
    filled(broker, ["c"])  # the job stopped: the stream can be made anew
    assert broker.read("clicks") in ({0: ["c"], 1: []}, {0: [], 1: ["c"]})
