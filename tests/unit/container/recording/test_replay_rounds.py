"""A recorded round (sync tasks over several partitions in round robin: one ROUND record) replays as a
round: the replay's chooser hands out the round's row and the room of its further rows, the loop takes
them straight from the buffers, never past the record, and the replayer checks each piece's ends
(``samza_nb.container.recording.replay_rounds``)."""

from __future__ import annotations

import asyncio
import itertools
import uuid
from pathlib import Path
from typing import Any, ClassVar

import pytest

from samza_nb import OutgoingMessageEnvelope, RequestScope
from samza_nb.container.recording.recording import ROUND, Column, Entry, Recording
from samza_nb.container.recording.replay import ReplayDivergedError, ScheduleReplayer
from samza_nb.container.recording.replay_rounds import round_parts
from tests.unit.container.harness import OUT, Job

PARTITIONS = 8
STORE = {
    "stores.last.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "stores.last.key.serde": "long",
    "stores.last.msg.serde": "long",
}


class Interleaved:
    """Sync, a task per partition: sends ``[partition, message]`` and stores, by ``message % 5``, the
    position the message ran at among all the tasks' messages (a counter the run's tasks share), so the
    output's order and the stores show the interleaving; partition 3 requests a commit at every 97th
    message (a round cut in its row) and a window sends a marker."""

    counter: ClassVar[itertools.count[int]] = itertools.count()

    def init(self, context: Any) -> None:
        self.store = context.get_store("last")

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        partition, message = envelope.ssp.partition, envelope.message
        self.store.put(message % 5, next(self.counter))
        collector.send(OutgoingMessageEnvelope(OUT, [partition, message]))
        if partition == 3 and message % 97 == 96:
            coordinator.commit(RequestScope.CURRENT_TASK)

    def window(self, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, "window"))


def job_of(
    tmp: Path,
    n: int,
    *,
    record: Path | None = None,
    changed: dict[tuple[int, int], Any] | None = None,
    lengths: dict[int, int] | None = None,
) -> Job:
    """A job of :class:`Interleaved` over messages 0..n-1 of each partition (``lengths``: fewer), then
    end-of-stream, in round robin; ``changed``: (partition, message) -> another value."""
    values = {
        "task.max.concurrency": "1",
        "task.window.ms": "1",
        "job.logged.store.base.dir": str(tmp / f"state-{uuid.uuid4().hex}"),
        **STORE,
    }
    if record is not None:
        values["job.record.path"] = str(record)
    job = Job(inputs={"in": PARTITIONS}, **{key.replace(".", "__"): value for key, value in values.items()})
    job.broker.create_stream("out", 1)
    for partition in range(PARTITIONS):
        count = (lengths or {}).get(partition, n)
        job.send("in", [(changed or {}).get((partition, i), i) for i in range(count)], partition=partition)
    job.end()
    return job


def run(job: Job, replay: Path | None = None) -> Any:
    """Run ``job`` (replaying ``replay``): its container."""
    Interleaved.counter = itertools.count()
    return job.run(Interleaved, replay=replay) if replay is not None else job.run(Interleaved)


def store(container: Any) -> list[tuple[Any, ...]]:
    sql = "SELECT partition, key, value FROM last ORDER BY partition, key"
    return list(asyncio.run(container.query_store("last", sql)))


def checkpoints(job: Job) -> list[dict[str, str]]:
    return [job.checkpoint(f"Partition {p}") for p in range(PARTITIONS)]


def recorded_run(tmp: Path, n: int) -> tuple[Path, Job, Any]:
    """A recorded run over ``n`` messages a partition: the recording, the job and its container."""
    recording = tmp / "recording"
    job = job_of(tmp, n, record=recording)
    return recording, job, run(job)


def test_a_multi_partition_recording_replays_identically_with_rounds_cut_by_commits_and_windows(
    tmp_path: Path,
) -> None:
    recording, recorded, container = recorded_run(tmp_path, 3000)
    output = recorded.output()[0]
    assert "window" in output
    rounds = [e for e in Recording(recording).entries(runs=True) if e.kind == ROUND]
    assert any(e.extra for e in rounds)  # a round cut in its row (partition 3's commit requests)
    assert len(rounds) < 3000 * PARTITIONS / 50

    replayed = job_of(tmp_path, 3000)
    replayed_container = run(replayed, recording)
    assert replayed.output()[0] == output  # the same outputs in the same order, windows where they were
    assert store(replayed_container) == store(container)  # the interleaving the stores saw
    assert checkpoints(replayed) == checkpoints(recorded)
    assert checkpoints(replayed)[3] == {"test.in#3": "2999"}


def test_rounds_are_replayed_as_rounds_not_one_message_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording, recorded, _ = recorded_run(tmp_path, 3000)
    calls = {"round": 0, "round messages": 0, "run messages": 0, "one": 0}
    on_round, on_run = ScheduleReplayer.on_round, ScheduleReplayer.on_run
    on_started = ScheduleReplayer.on_started

    def counted_round(self: ScheduleReplayer, *args: Any) -> None:
        _, ssps, _, rows, extra = args
        calls["round"] += 1
        calls["round messages"] += rows * len(ssps) + extra
        on_round(self, *args)

    def counted_run(self: ScheduleReplayer, *args: Any) -> None:
        calls["run messages"] += args[2]
        on_run(self, *args)

    def counted_one(self: ScheduleReplayer, *args: Any) -> None:
        calls["one"] += 1
        on_started(self, *args)

    monkeypatch.setattr(ScheduleReplayer, "on_round", counted_round)
    monkeypatch.setattr(ScheduleReplayer, "on_run", counted_run)
    monkeypatch.setattr(ScheduleReplayer, "on_started", counted_one)
    replayed = job_of(tmp_path, 3000)
    run(replayed, recording)
    assert replayed.output()[0] == recorded.output()[0]
    total = 3000 * PARTITIONS
    # Every message started in a round or a run (a run of one: at the edges of rounds cut short), and
    # most in rounds of many rows.
    assert calls["round messages"] + calls["run messages"] == total
    assert calls["round messages"] > total / 2
    assert calls["round"] < total / 50
    assert calls["one"] < total / 50


def test_a_message_that_differs_is_detected_mid_round_and_the_replay_stops_right_before_it(
    tmp_path: Path,
) -> None:
    recording, recorded, _ = recorded_run(tmp_path, 3000)
    output = recorded.output()[0]
    changed = job_of(tmp_path, 3000, changed={(5, 1234): -1})
    with pytest.raises(ReplayDivergedError, match="partition 5 offset 1234: the recording read another"):
        run(changed, recording)
    assert changed.output()[0] == output[: output.index([5, 1234])]


def test_a_partition_ending_early_is_detected_mid_round_naming_the_position(tmp_path: Path) -> None:
    recording, recorded, _ = recorded_run(tmp_path, 400)
    output = recorded.output()[0]
    shorter = job_of(tmp_path, 400, lengths={6: 250})
    position = sum(isinstance(item, list) for item in output[: output.index([6, 250])]) + 1
    expected = (
        rf"position {position} .*expected task 'Partition 6' test\.in#6@250, found test\.in#6 end-of-stream"
    )
    with pytest.raises(ReplayDivergedError, match=expected):
        run(shorter, recording)
    assert shorter.output()[0] == output[: output.index([6, 250])]


def test_a_piece_of_a_round_is_checked_at_its_ends() -> None:
    # A round of partitions 4, 2, 7: 3 full rows, then partition 4 once more.
    entry = Entry(
        ROUND,
        ssp=4,
        value=10,
        rows=3,
        extra=1,
        columns=(Column(4, 4, "10", "13"), Column(2, 3, "0", "2"), Column(7, 3, "a", "c")),
    )
    assert round_parts(entry, 0, [4, 2, 7], [("10", "11"), ("0", "1"), ("a", "b")], 2, 0) is None
    # the last offset of partition 2 differs: 1 row in (message 4 of the piece)
    assert round_parts(entry, 0, [4, 2, 7], [("10", "11"), ("0", "9"), ("a", "b")], 2, 0) == (4, 2, "9")
    # another partition in turn
    assert round_parts(entry, 0, [4, 7, 2], [("10", "11"), ("a", "b"), ("0", "1")], 2, 0) == (1, 7, "a")
    # the rest of a row begun (message 4 on: partitions 2 and 7 of row 1)
    assert round_parts(entry, 4, [2, 7], [("1", "1"), ("b", "b")], 1, 0) is None
    # a narrow piece may not go on to the next row
    assert round_parts(entry, 4, [2, 7], [("1", "2"), ("b", "c")], 2, 0) == (2, 2, "")
    # past the record: the whole round and one more of partition 2
    assert round_parts(entry, 0, [4, 2, 7], [("10", "13"), ("0", "3"), ("a", "c")], 3, 2) == (10, 2, "")
