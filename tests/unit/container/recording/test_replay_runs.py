"""Recording keeps the loop's fast paths: a run of a sync task's messages, or a round robin of sync tasks,
is one record (RUN, ROUND), which a replay expands back into the same messages in the same order; and the
file format's codes read back (``samza_nb.container.recording.recording``)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, SystemStreamPartition, TaskFailedError
from samza_nb.chooser.replay import ReplayChooser
from samza_nb.container.recording.recording import (
    DISPATCH,
    END,
    EOS,
    HEADER,
    RUN,
    SCHEDULE,
    WINDOW,
    Header,
    PartitionEntry,
    Recording,
)
from samza_nb.container.recording.recording_writer import ScheduleWriter
from samza_nb.container.recording.replay import ReplayDivergedError
from tests.unit.container.harness import OUT, Job


class Tagged:
    """Sync, a little work per message and a window: the output shows the interleaving of the partitions
    and where the windows fired."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        deadline = time.perf_counter() + 0.00005
        while time.perf_counter() < deadline:
            pass
        collector.send(OutgoingMessageEnvelope(OUT, [envelope.ssp.partition, envelope.message]))

    def window(self, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, "window"))


class Quick(Tagged):
    """:class:`Tagged` without the work."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, [envelope.ssp.partition, envelope.message]))


class FailsAt57:
    """Sync: sends each message on, and raises at message 57."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        if envelope.message == 57:
            raise ValueError("57")
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


def run(task: type, partitions: int, n: int, **config: Any) -> tuple[Job, Any]:
    """A job of ``task`` over ``n`` messages in each of ``partitions`` partitions (then end-of-stream)."""
    job = Job(inputs={"in": partitions}, task__max__concurrency="1", **config)
    job.broker.create_stream("out", 1)
    for partition in range(partitions):
        job.send("in", list(range(n)), partition=partition)
    job.end()
    return job, job.run(task)


def test_a_recorded_round_robin_of_sync_tasks_replays_in_the_same_order(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    config = {"task__window__ms": "2"}
    job, _ = run(Tagged, 4, 400, job__record__path=str(recording), **config)
    recorded = job.output()[0]
    assert recorded.count("window") >= 4
    entries = list(Recording(recording).entries())
    assert sum(entry.kind == DISPATCH for entry in entries) == 1600
    assert sum(entry.kind == EOS for entry in entries) == 4
    assert entries[-1].kind == END

    replayed = Job(inputs={"in": 4}, task__max__concurrency="1")
    replayed.broker.create_stream("out", 1)
    for partition in range(4):
        replayed.send("in", list(range(400)), partition=partition)
    replayed.end()
    replayed.run(Tagged, replay=recording)
    assert replayed.output()[0] == recorded


def test_a_round_robin_recording_takes_a_record_per_round_not_per_message(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    run(Quick, 4, 1000, job__record__path=str(recording))
    assert (recording / SCHEDULE).stat().st_size < 4000 / 10  # rounds of the 4 partitions, one record each
    assert sum(entry.kind == DISPATCH for entry in Recording(recording).entries()) == 4000


def test_a_run_that_failed_is_recorded_with_the_failing_message_so_the_replay_fails_there(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "recording"
    with pytest.raises(TaskFailedError, match="offset 57"):
        run(FailsAt57, 1, 100, job__record__path=str(recording))
    offsets = [entry.offset for entry in Recording(recording).entries() if entry.kind == DISPATCH]
    assert offsets == [str(offset) for offset in range(58)]
    job = Job(task__max__concurrency="1")
    job.broker.create_stream("out", 1)
    job.send("in", list(range(100)))
    job.end()
    with pytest.raises(TaskFailedError, match="offset 57"):
        job.run(FailsAt57, replay=recording)
    assert job.output()[0] == list(range(57))


def _writer(directory: Path, starts: list[str]) -> ScheduleWriter:
    partitions = tuple(
        PartitionEntry(SystemStreamPartition("test", "in", i), i, start, None)
        for i, start in enumerate(starts)
    )
    header = Header(("job", "1"), tuple(f"Partition {i}" for i in range(len(starts))), partitions, {})
    return ScheduleWriter(directory, header)


def _dispatches(recording: Recording) -> list[tuple[int, str]]:
    return [(entry.ssp, entry.offset) for entry in recording.entries() if entry.kind == DISPATCH]


def test_runs_and_rounds_read_back_as_their_messages_with_the_offsets_known(tmp_path: Path) -> None:
    writer = _writer(tmp_path, ["0", "10", "a"])
    writer.run(0, 5, "0", "4")  # consecutive: every offset known
    writer.run(1, 4, "10", "20")  # a gap: the ends known, those between are the partition's next ("")
    writer.run(2, 3, "a", "c")  # not integers: the ends
    writer.round([0, 1, 2], 2, 1, [("5", "7"), ("21", "22"), ("d", "e")])  # 0 gets a third message
    writer.window(1)
    writer.round([1, 0], 0, 1, [("23", "23"), ("0", "0")])  # stopped in its first row: only 1 started
    writer.end(1)
    writer.close()
    recording = Recording(tmp_path)
    assert _dispatches(recording) == [
        *[(0, str(i)) for i in range(5)],
        (1, "10"),
        (1, ""),
        (1, ""),
        (1, "20"),
        (2, "a"),
        (2, ""),
        (2, "c"),
        (0, "5"),
        (1, "21"),
        (2, "d"),
        (0, "6"),
        (1, "22"),
        (2, "e"),
        (0, "7"),
        (1, "23"),
    ]
    assert [entry.kind for entry in recording.entries()][-3:] == [WINDOW, DISPATCH, END]
    assert recording.size < 60


def test_a_record_cut_short_reads_as_the_records_before_it(tmp_path: Path) -> None:
    writer = _writer(tmp_path, ["0"])
    writer.run(0, 3, "0", "2")
    writer.run(0, 300, "3", "999")  # an explicit last offset: several bytes
    writer.close()
    data = (tmp_path / SCHEDULE).read_bytes()
    (tmp_path / SCHEDULE).write_bytes(data[:-2])
    assert _dispatches(Recording(tmp_path)) == [(0, "0"), (0, "1"), (0, "2")]


def test_a_version_1_recording_still_reads(tmp_path: Path) -> None:
    header = {
        "format": "samza-nb schedule",
        "version": 1,
        "job": {"name": "job", "id": "1"},
        "tasks": ["Partition 0"],
        "partitions": [
            {"system": "test", "stream": "in", "partition": 0, "task": 0, "start": "0", "last": None}
        ],
        "config": {},
    }
    (tmp_path / HEADER).write_text(json.dumps(header))
    # Version 1 tags are kind | id << 3: NEXT, NEXT, DISPATCH "7", EOS, END (ended).
    (tmp_path / SCHEDULE).write_bytes(bytes([0, 0, 1, 1]) + b"7" + bytes([2, 7 | 1 << 3]))
    recording = Recording(tmp_path)
    assert _dispatches(recording) == [(0, "0"), (0, "1"), (0, "7")]
    assert [entry.kind for entry in recording.entries()][-2:] == [EOS, END]
    assert RUN not in {entry.kind for entry in recording.entries()}


def test_a_recorded_run_replays_as_a_run_not_one_message_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = tmp_path / "recording"
    job, _ = run(Quick, 1, 5000, job__record__path=str(recording))
    recorded = job.output()[0]
    offered: list[str] = []  # the envelopes the replay's chooser was offered one by one
    update = ReplayChooser.update
    monkeypatch.setattr(ReplayChooser, "update", lambda self, e: (offered.append(e.offset), update(self, e)))
    replayed = Job(task__max__concurrency="1")
    replayed.broker.create_stream("out", 1)
    replayed.send("in", list(range(5000)))
    replayed.end()
    replayed.run(Quick, replay=recording)
    assert replayed.output()[0] == recorded
    assert replayed.checkpoint() == {"test.in#0": "4999"}
    assert 0 < len(offered) < 5000 / 50  # the rest was taken in runs, straight from the buffer


def test_a_message_that_differs_inside_a_recorded_run_stops_the_replay_right_before_it(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "recording"
    run(Quick, 1, 5000, job__record__path=str(recording))
    assert Recording(recording).records() < 50  # runs
    changed = Job(task__max__concurrency="1")
    changed.broker.create_stream("out", 1)
    changed.send("in", [3001 * 7 if i == 3001 else i for i in range(5000)])
    changed.end()
    with pytest.raises(ReplayDivergedError, match="partition 0 offset 3001: the recording read another"):
        changed.run(Quick, replay=recording)
    assert changed.output()[0] == [[0, i] for i in range(3001)]
