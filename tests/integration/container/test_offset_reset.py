"""A checkpoint past the end of a durable log or a file that was recreated shorter: the job follows the
system's reset policy (``samza.offset.default``), processes every message from the reset position, writes
its next checkpoint from there and reports the reset; without a policy it fails in one line. Never a
silent skip."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest

from samza_nb import Config, OutgoingMessageEnvelope, SamzaError, SystemStream, SystemStreamPartition
from samza_nb.runtime.local import LocalJobRunner, read_checkpoints
from samza_nb.systems.log import DurableLog, LogSystemFactory
from tests.eventually import aeventually

TASK = "Partition 0"


class Seen:
    """Records the offset of every message, in processing order."""

    seen: ClassVar[list[int]] = []

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        Seen.seen.append(int(envelope.offset))


class Source:
    """One input of a system the test can recreate shorter."""

    def __init__(self, kind: str, root: Path) -> None:
        self.kind, self.root = kind, root
        self.system = "files" if kind == "file" else "log"
        self.ssp = SystemStreamPartition(self.system, "in", 0)

    def config(self, **extra: str) -> Config:
        values = {
            "job.name": f"reset-{self.kind}",
            "task.inputs": f"{self.system}.in",
            "job.logged.store.base.dir": str(self.root / "state"),
            "task.commit.ms": "100",
        }
        if self.kind == "file":
            values["systems.files.samza.factory"] = "samza_nb.systems.file.FileSystemFactory"
            values["systems.files.streams.in.path"] = str(self.root / "in.txt")
        else:
            values["systems.log.samza.factory"] = "samza_nb.systems.log.LogSystemFactory"
            values["systems.log.log.dir"] = str(self.root / "log")
        values.update(extra)
        return Config(values)

    def write(self, count: int) -> None:
        """The input anew with ``count`` messages."""
        if self.kind == "file":
            (self.root / "in.txt").write_text("".join(f"m{i}\n" for i in range(count)))
            return
        shutil.rmtree(self.root / "log", ignore_errors=True)
        with DurableLog(self.root / "log") as log:
            log.create_stream("in", 1)

        async def go() -> None:
            producer = LogSystemFactory().get_producer("log", self.config())
            await producer.start()
            for i in range(count):
                producer.send("t", OutgoingMessageEnvelope(SystemStream("log", "in"), f"m{i}", partition=0))
            await producer.stop()

        asyncio.run(go())

    def run(self, config: Config, count: int) -> LocalJobRunner:
        """Run the job (a file job ends at its end-of-stream; a log job after ``count`` messages)."""
        Seen.seen = []
        runner = LocalJobRunner(config, Seen, max_messages=count if self.kind == "log" else None)
        runner.run(timeout=30)
        return runner

    def checkpoint(self, config: Config) -> str | None:
        return asyncio.run(read_checkpoints(config, [TASK]))[TASK].get(self.ssp)


@pytest.fixture(params=["log", "file"])
def source(request: pytest.FixtureRequest, tmp_path: Path) -> Source:
    """A durable log or file input checkpointed at offset 30, then recreated with 10 messages."""
    source = Source(request.param, tmp_path)
    source.write(31)
    config = source.config(**{f"systems.{source.system}.samza.offset.default": "oldest"})
    source.run(config, 31)
    assert Seen.seen == list(range(31))
    assert source.checkpoint(config) == "30"
    source.write(10)
    return source


def test_oldest_reads_every_message_from_the_reset_and_checkpoints_from_there(source: Source) -> None:
    key = f"systems.{source.system}.samza.offset.default"
    config = source.config(**{key: "oldest"})
    runner = source.run(config, 10)
    assert Seen.seen == list(range(10))
    assert source.checkpoint(config) == "9"
    assert runner.container is not None
    (reset,) = runner.container.status().resets
    assert (reset.ssp, reset.from_offset, reset.to_offset) == (source.ssp, "31", "0")
    assert reset.describe() == (
        f"{source.ssp}: offset 31 is past the end of the {source.kind} (next offset 10: the {source.kind} "
        f"is shorter than the checkpoint); reset to offset 0 ({key}=oldest)"
    )


def test_upcoming_skips_what_is_there_and_says_so(source: Source) -> None:
    key = f"systems.{source.system}.streams.in.samza.offset.default"
    config = source.config(**{key: "upcoming"})
    if source.kind == "file":
        runner = source.run(config, 0)  # it ends at its end-of-stream
    else:  # an unbounded log: stopped once the reset is seen
        Seen.seen = []
        runner = LocalJobRunner(config, Seen)

        async def scenario() -> None:
            job = asyncio.create_task(runner.run_async(timeout=30))

            async def reset_seen() -> bool:
                return runner.container is not None and bool(runner.container.status().resets)

            await aeventually(reset_seen, timeout=20, message="the reset")
            runner.stop()
            await job

        asyncio.run(scenario())
    assert Seen.seen == []
    assert runner.container is not None
    (reset,) = runner.container.status().resets
    assert (reset.from_offset, reset.to_offset, reset.policy) == ("31", "10", f"{key}=upcoming")
    assert source.checkpoint(config) == "9"  # the position it reset to, never the stale 30


def test_without_a_reset_policy_it_fails_in_one_line(source: Source) -> None:
    config = source.config()
    with pytest.raises(SamzaError) as failure:
        source.run(config, 10)
    message = str(failure.value)
    assert "\n" not in message
    assert (
        f"{source.ssp}: offset 31 (after the job's checkpoint) is past the end of the {source.kind}"
        in message
    )
    assert "whose next offset is 10" in message
    assert f"systems.{source.system}.samza.offset.default" in message
    assert Seen.seen == []
    assert source.checkpoint(config) == "30"


def test_a_reset_to_offset_0_checkpoints_the_offset_before_it_and_a_restart_reads_from_0(
    tmp_path: Path,
) -> None:
    source = Source("log", tmp_path)
    source.write(31)
    config = source.config(**{"systems.log.samza.offset.default": "oldest"})
    source.run(config, 31)
    source.write(0)  # recreated empty: the reset goes to offset 0, nothing to process yet
    Seen.seen = []
    runner = LocalJobRunner(config, Seen)

    async def until_reset_then_stop() -> None:
        job = asyncio.create_task(runner.run_async(timeout=30))

        async def reset_seen() -> bool:
            return runner.container is not None and bool(runner.container.status().resets)

        await aeventually(reset_seen, timeout=20, message="the reset")
        runner.stop()
        await job

    asyncio.run(until_reset_then_stop())
    assert Seen.seen == []
    assert source.checkpoint(config) == "-1"  # before offset 0: not the stale 30
    source.write(5)
    runner = source.run(config, 5)
    assert Seen.seen == list(range(5))
    assert runner.container is not None and runner.container.status().resets == ()
