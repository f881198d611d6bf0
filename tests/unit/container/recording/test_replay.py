"""Record and replay of a run's schedule (``job.record.path``, ``replay=DIR``), on the in-memory system.

Each run is a job of its own (its own in-memory namespace, checkpoints and state directory) over the same
inputs, so the recorded run, its replays and unreplayed reruns can be compared."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from samza_nb import ConfigError, OutgoingMessageEnvelope
from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.container.recording.message_digests import DIGESTS, digest
from samza_nb.container.recording.recording import DISPATCH, HEADER, SCHEDULE, Recording
from samza_nb.container.recording.replay import ReplayDivergedError
from tests.unit.container.harness import OUT, Job

STORE = {
    "stores.last.factory": "samza_nb.storage.duckdb.DuckDBStoreFactory",
    "stores.last.key.serde": "long",
    "stores.last.msg.serde": "long",
}


class Jittery:
    """Async, 8 in flight: each message waits a random while, then sends and writes its key's last value;
    so the output order and the store's last writers depend on the order the waits end."""

    def init(self, context: Any) -> None:
        self.store = context.get_store("last")

    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        await asyncio.sleep(random.random() * 0.002)
        self.store.put(envelope.message % 7, envelope.message)
        await asyncio.sleep(0)
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


class Windowed:
    """Sync, with a window timer: the output shows where each window fired among the messages."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        deadline = time.perf_counter() + 0.0002  # some work, so a few windows fire during the run
        while time.perf_counter() < deadline:
            pass
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))

    def window(self, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, "window"))


class Sends:
    """Sync: sends each message on."""

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        collector.send(OutgoingMessageEnvelope(OUT, envelope.message))


class Run:
    """One run of ``task`` over messages 0..n-1 (and end-of-stream) of stream "in"."""

    def __init__(
        self,
        tmp: Path,
        task: type,
        n: int,
        *,
        record: Path | None = None,
        replay: Path | None = None,
        end: bool = True,
        changed: dict[int, Any] | None = None,
        **config: Any,
    ) -> None:
        values = {"task.max.concurrency": "8", **STORE, **config}
        values["job.logged.store.base.dir"] = str(tmp / f"state-{uuid.uuid4().hex}")
        if record is not None:
            values["job.record.path"] = str(record)
        job = Job(**{key.replace(".", "__"): value for key, value in values.items()})
        job.broker.create_stream("out", 1)
        job.send("in", [(changed or {}).get(i, i) for i in range(n)])
        if end:
            job.end()
        self.job = job
        self.container = job.run(task, replay=replay) if replay is not None else job.run(task)
        self.output = job.output()[0]

    def store(self) -> list[tuple[Any, ...]]:
        rows = asyncio.run(self.container.query_store("last", "SELECT key, value FROM last ORDER BY key"))
        return list(rows)


def test_a_replayed_async_run_gives_the_recorded_output_order_and_store_while_a_rerun_differs(
    tmp_path: Path,
) -> None:
    recording = tmp_path / "recording"
    recorded = Run(tmp_path, Jittery, 300, record=recording)
    assert sorted(recorded.output) == list(range(300))

    first = Run(tmp_path, Jittery, 300, replay=recording)
    second = Run(tmp_path, Jittery, 300, replay=recording)
    assert first.output == recorded.output
    assert second.output == recorded.output
    assert first.store() == second.store() == recorded.store()
    assert len(recorded.store()) == 7
    assert first.job.checkpoint() == recorded.job.checkpoint() == {"test.in#0": "299"}

    reruns = [Run(tmp_path, Jittery, 300).output for _ in range(3)]
    assert any(rerun != recorded.output for rerun in reruns)


def test_a_shorter_input_fails_the_replay_naming_the_position(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    Run(tmp_path, Jittery, 60, record=recording)
    with pytest.raises(ReplayDivergedError) as failure:
        Run(tmp_path, Jittery, 40, replay=recording)
    assert "position 41" in str(failure.value)
    assert "expected task 'Partition 0' test.in#0@40, found test.in#0 end-of-stream" in str(failure.value)


@pytest.mark.parametrize("task", [Sends, Jittery])
def test_an_input_of_the_same_count_with_a_changed_value_stops_the_replay_at_that_message(
    tmp_path: Path, task: type
) -> None:
    recording = tmp_path / "recording"
    concurrency = {"task.max.concurrency": "1" if task is Sends else "8"}
    recorded = Run(tmp_path, task, 60, record=recording, **concurrency)
    assert (recording / DIGESTS).stat().st_size > 60 * 4
    with pytest.raises(ReplayDivergedError) as failure:
        Run(tmp_path, task, 60, replay=recording, changed={25: 1025}, **concurrency)
    message = str(failure.value)
    assert message.startswith(
        f"replay of {recording}: the input differs from the recording at stream test.in partition 0 offset "
        f"25: the recording read another message there (digest {digest_of(None, 25):#x}), this run "
        f"reads key None, value 1025 (digest {digest_of(None, 1025):#x})"
    )
    assert "\n" not in message
    assert Run(tmp_path, task, 60, replay=recording, **concurrency).output == recorded.output


def test_a_recording_of_version_2_has_no_digests_and_replays_unchecked(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    recorded = Run(tmp_path, Sends, 30, record=recording, **{"task.max.concurrency": "1"})
    header = json.loads((recording / HEADER).read_text())
    assert header["version"] == 3
    (recording / HEADER).write_text(json.dumps({**header, "version": 2}))
    (recording / DIGESTS).unlink()
    replayed = Run(tmp_path, Sends, 30, replay=recording, changed={3: "x"}, **{"task.max.concurrency": "1"})
    assert len(replayed.output) == len(recorded.output) and replayed.output[3] == "x"


def digest_of(key: Any, value: Any) -> int:
    return int(digest(IncomingMessageEnvelope(SystemStreamPartition("test", "in", 0), "0", key, value)))


def test_a_longer_input_fails_the_replay_where_the_recording_ended(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    Run(tmp_path, Windowed, 30, record=recording, **{"task.max.concurrency": "1"})
    with pytest.raises(
        ReplayDivergedError,
        match=r"position 31 .*expected task 'Partition 0' test\.in#0 "
        r"end-of-stream, found test\.in#0@30",
    ):
        Run(tmp_path, Windowed, 40, replay=recording, **{"task.max.concurrency": "1"})


def test_a_sync_task_replays_with_its_windows_at_the_recorded_positions(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    config = {"task.max.concurrency": "1", "task.window.ms": "2"}
    recorded = Run(tmp_path, Windowed, 300, record=recording, **config)
    windows = recorded.output.count("window")
    assert windows >= 2
    replayed = Run(tmp_path, Windowed, 300, replay=recording, **config)
    assert replayed.output == recorded.output
    # The replay's clock does not fire windows: without the recording's window period, still the same.
    again = Run(tmp_path, Windowed, 300, replay=recording, **{"task.max.concurrency": "1"})
    assert again.output == recorded.output


def test_a_recording_of_a_sync_run_takes_a_record_per_run_not_per_message(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    recorded = Run(tmp_path, Sends, 1000, record=recording, **{"task.max.concurrency": "1"})
    size = (recording / SCHEDULE).stat().st_size
    assert size < 1000 / 4  # the loop kept its runs: a run is one record of a few bytes
    read = Recording(recording)
    header = read.header
    assert header.tasks == ("Partition 0",)
    assert header.config["task.max.concurrency"] == "1"
    offsets = [entry.offset for entry in read.entries() if entry.kind == DISPATCH]
    assert offsets == [str(offset) for offset in range(1000)]
    replayed = Run(tmp_path, Sends, 1000, replay=recording, **{"task.max.concurrency": "1"})
    assert replayed.output == recorded.output == list(range(1000))


def test_a_recorded_stop_stops_the_replay_at_the_same_message(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    recorded = Run(tmp_path, Jittery, 100, record=recording)
    assert len(recorded.output) == 100
    stopped_recording = tmp_path / "stopped"
    job_values = {
        "job.logged.store.base.dir": str(tmp_path / "stopped-state"),
        "job.record.path": str(stopped_recording),
        "task.max.concurrency": "8",
        **STORE,
    }
    job = Job(**{key.replace(".", "__"): value for key, value in job_values.items()})
    job.broker.create_stream("out", 1)
    job.send("in", list(range(100)))
    job.end()
    job.run(Jittery, max_messages=37)
    stopped = job.output()[0]
    replayed = Run(tmp_path, Jittery, 100, replay=stopped_recording)
    assert replayed.output == stopped
    assert replayed.job.checkpoint() == job.checkpoint()


def test_a_recording_cut_short_by_a_crash_replays_its_prefix_then_stops_committing(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    config = {"task.max.concurrency": "1"}
    recorded = Run(tmp_path, Windowed, 200, record=recording, **config)
    data = (recording / SCHEDULE).read_bytes()
    (recording / SCHEDULE).write_bytes(data[: len(data) // 2])
    replayed = Run(tmp_path, Windowed, 200, replay=recording, **config)
    assert 0 < len(replayed.output) < len(recorded.output)
    assert replayed.output == recorded.output[: len(replayed.output)]
    last = max(message for message in replayed.output if message != "window")
    assert replayed.job.checkpoint() == {"test.in#0": str(last)}


def test_replay_refuses_another_job_and_recording_while_replaying(tmp_path: Path) -> None:
    recording = tmp_path / "recording"
    Run(tmp_path, Windowed, 5, record=recording, **{"task.max.concurrency": "1"})
    with pytest.raises(ConfigError, match="job.name"):
        Run(tmp_path, Windowed, 5, replay=recording, **{"job.name": "other"})
    with pytest.raises(ConfigError, match="a replay does not record"):
        Run(tmp_path, Windowed, 5, replay=recording, record=tmp_path / "again")
