"""The cost of recording a run's schedule (``job.record.path``), as ratios measured in the same run.

For each workload: the container's rate without recording, with recording (ratio: recorded / plain), the
recording's records and bytes per message, and the rate of replaying it (ratios: replay / plain, replay /
recorded):

- a sync pass-through task, concurrency 1, over 1 and over 8 partitions: a recorded run keeps the loop's
  runs and rounds, each one record (RUN, ROUND) whatever its length, so recording costs a few records per
  pump, not per message;
- an ``async def`` task that awaits ``asyncio.sleep(0)`` twice, concurrency 8: every message, every step
  of its coroutine and every completion is a record (about nine bytes a message).

A replay forces the recorded schedule: a recorded run of a sync task replays as a run and a recorded
round of several partitions as a round (taken straight from the buffers, never past the record, the
batches checked against the recorded digests as they are polled), so a pass-through replays at about
the plain run's speed; an async task's messages, steps and completions go one record at a time, as they
were recorded.

Run: ``python benchmarks/record.py [--messages N] [--async-messages N] [--runs R] [--no-replay]``; prints
medians. The defaults take a minute or two; ``--messages 200000
--async-messages 10000 --runs 1 --no-replay`` a few seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.output_check import same
from samza_nb import Config
from samza_nb.checkpoint.inmemory import InMemoryCheckpointManager
from samza_nb.container.container import SamzaContainer
from samza_nb.container.recording.recording import Recording
from samza_nb.coordinator.planning import plan_job_model
from samza_nb.systems.inmemory.system import InMemoryBroker


class PassThrough:
    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        pass


class TwoAwaits:
    async def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        await asyncio.sleep(0)
        await asyncio.sleep(0)


def container(
    task: type, messages: int, partitions: int, config: dict[str, str], replay: Path | None = None
) -> Any:
    """A container of ``task`` over a fresh in-memory namespace holding messages 0.. in ``partitions``."""
    namespace = f"record-bench-{uuid.uuid4().hex}"
    broker = InMemoryBroker.named(namespace, "test")
    broker.create_stream("in", partitions)
    for partition in range(partitions):
        for value in range(messages // partitions):
            broker.send("in", value, partition=partition)
    broker.end_stream("in")
    values = {
        "job.name": "record-bench",
        "systems.test.samza.factory": "samza_nb.systems.inmemory.InMemorySystemFactory",
        "systems.test.inmemory.namespace": namespace,
        "systems.test.samza.offset.default": "oldest",
        "task.inputs": "test.in",
        **config,
    }
    return SamzaContainer(
        Config(values),
        task,
        planner=plan_job_model,
        checkpoint_manager=InMemoryCheckpointManager(),
        replay=replay,
    )


def timed(run: Any, messages: int) -> float:
    """Messages per second of ``run`` (a container) to its end."""
    start = time.perf_counter()
    asyncio.run(run.run())
    rate = messages / (time.perf_counter() - start)
    same("messages processed", run.processed, messages)
    return rate


def measure(
    task: type, messages: int, partitions: int, concurrency: int, replay: bool
) -> tuple[float, float, float, float, float]:
    """(plain rate, recorded rate, records per message, bytes per message, replay rate: NaN without)."""
    messages -= messages % partitions
    base = {"task.max.concurrency": str(concurrency)}
    plain = timed(container(task, messages, partitions, base), messages)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "recording"
        recorded = timed(
            container(task, messages, partitions, {**base, "job.record.path": str(path)}), messages
        )
        recording = Recording(path)
        records, size = recording.records(), recording.size
        replayed = float("nan")
        if replay:
            replayed = timed(container(task, messages, partitions, base, replay=path), messages)
    return plain, recorded, records / messages, size / messages, replayed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000, help="messages of the sync workloads")
    parser.add_argument("--async-messages", type=int, default=50_000, help="messages of the async workload")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-replay", action="store_true", help="do not time replays (the slow part)")
    args = parser.parse_args(argv)
    workloads = [
        ("sync pass-through, 1 partition", PassThrough, args.messages, 1, 1),
        ("sync pass-through, 8 partitions", PassThrough, args.messages, 8, 1),
        ("async, 2 awaits, concurrency 8", TwoAwaits, args.async_messages, 1, 8),
    ]
    print(f"medians of {args.runs} runs (ratios: to the plain run of the same round)")
    columns = [("plain msgs/s", 13), ("recorded", 11), ("ratio", 6), ("rec/msg", 8), ("B/msg", 7)]
    columns += [("replay", 9), ("ratio", 6), ("/rec", 6)]
    print(f"{'workload':34} " + " ".join(f"{title:>{width}}" for title, width in columns))
    replay = not args.no_replay
    for name, task, messages, partitions, concurrency in workloads:
        results = [measure(task, messages, partitions, concurrency, replay) for _ in range(args.runs)]
        plain = statistics.median(r[0] for r in results)
        recorded = statistics.median(r[1] for r in results)
        ratio = statistics.median(r[1] / r[0] for r in results)
        records = statistics.median(r[2] for r in results)
        size = statistics.median(r[3] for r in results)
        replayed = statistics.median(r[4] for r in results)
        replay_ratio = statistics.median(r[4] / r[0] for r in results)
        to_recorded = statistics.median(r[4] / r[1] for r in results)
        print(
            f"{name:34} {plain:13,.0f} {recorded:11,.0f} {ratio:6.3f} {records:8.4f} {size:7.4f} "
            f"{replayed:9,.0f} {replay_ratio:6.3f} {to_recorded:6.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
