"""The loop modes of samza_nb.testing: what each one sets, and a TestRunner running in it."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from samza_nb import OutgoingMessageEnvelope, SamzaError, SystemStream
from samza_nb.observe.bus import EventBus
from samza_nb.testing import LOOP_MODES, LoopMode, TestRunner

OUT = SystemStream("test", "out")
POOL = "job.container.thread.pool.size"
CONCURRENCY = "task.max.concurrency"


class WordCount:
    """Counts the words of its partition; sends the counts at end-of-stream."""

    def init(self, context: Any) -> None:
        self.counts: dict[str, int] = {}

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        for word in envelope.message.split():
            self.counts[word] = self.counts.get(word, 0) + 1

    def on_end_of_stream(self, collector: Any, coordinator: Any) -> None:
        for word, count in sorted(self.counts.items()):
            collector.send(OutgoingMessageEnvelope(OUT, (word, count)))


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_task_gives_the_same_outputs_and_checkpoints_in_every_mode(mode: LoopMode) -> None:
    result = TestRunner.of(WordCount, mode=mode).add_input("lines", ["a b a", "c"]).add_output("out").run()
    assert result.output("out") == {0: [("a", 2), ("b", 1), ("c", 1)]}
    assert {str(s): o for s, o in result.checkpoints["Partition 0"].items()} == {"test.lines#0": "1"}


def test_the_modes_are_one_per_execution_path_and_named_for_pytest_ids() -> None:
    by_name = {str(mode): mode for mode in LOOP_MODES}
    assert list(by_name) == ["inline", "observed", "thread_pool", "concurrency_3"]
    assert {name: mode.config() for name, mode in by_name.items()} == {
        "inline": {},
        "observed": {},
        "thread_pool": {POOL: "2"},
        "concurrency_3": {CONCURRENCY: "3"},
    }
    assert [name for name, mode in by_name.items() if mode.observed] == ["observed"]
    assert [name for name, mode in by_name.items() if not mode.for_applications] == ["concurrency_3"]


def test_an_observed_mode_makes_the_bus_publish_per_message_events() -> None:
    for mode in LOOP_MODES:
        bus = EventBus()
        mode.observe(bus)
        assert bus.per_message is mode.observed, mode


def test_the_config_a_test_sets_wins_over_the_modes() -> None:
    runner = TestRunner.of(WordCount, mode="thread_pool").add_input("lines", ["a"])
    assert runner.mode is not None and runner.mode.thread_pool_size == 2
    assert runner.config()[POOL] == "2"
    assert runner.add_config({POOL: "0"}).config()[POOL] == "0"
    mode = LoopMode("pool_of_4", thread_pool_size=4)
    assert dict(mode.apply({"job.name": "j"})) == {"job.name": "j", POOL: "4"}
    assert dict(mode.apply({POOL: "1"})) == {POOL: "1"}


def test_a_runner_without_a_mode_adds_nothing() -> None:
    config = TestRunner.of(WordCount).add_input("lines", ["a"]).config()
    assert POOL not in config and CONCURRENCY not in config


class Threads:
    """Records the thread of init and of every process call."""

    def __init__(self, seen: dict[str, set[int]]) -> None:
        self.seen = seen

    def init(self, context: Any) -> None:
        self.seen.setdefault("init", set()).add(threading.get_ident())

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.seen.setdefault("process", set()).add(threading.get_ident())


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_only_the_thread_pool_mode_runs_a_sync_task_off_the_loops_thread(mode: LoopMode) -> None:
    seen: dict[str, set[int]] = {}
    TestRunner.of(lambda: Threads(seen), mode=mode).add_input("in", list(range(20))).run()
    off_loop = seen["process"] - seen["init"]
    assert bool(off_loop) is bool(mode.thread_pool_size), seen


class Holding:
    """An async task that completes its callbacks only once ``batch`` of them are in flight (or at the
    last message): it finishes only when the loop lets ``batch`` messages be in flight at once."""

    def __init__(self, batch: int, last: str, peaks: list[int]) -> None:
        self.batch = batch
        self.last = last
        self.peaks = peaks
        self.held: list[Any] = []

    def process_async(self, envelope: Any, collector: Any, coordinator: Any, callback: Any) -> None:
        self.held.append(callback)
        if len(self.held) == self.batch or envelope.offset == self.last:
            self.peaks.append(len(self.held))
            held, self.held = self.held, []
            for done in held:
                done.complete()


def test_the_concurrency_3_mode_lets_three_messages_of_a_task_be_in_flight() -> None:
    peaks: list[int] = []
    result = (
        TestRunner.of(lambda: Holding(3, "5", peaks), mode="concurrency_3")
        .add_input("in", list(range(6)))
        .run(timeout=30)
    )
    assert peaks == [3, 3]
    assert result.processed == 6


def test_an_unknown_mode_name_is_an_error_naming_it_and_the_known_ones() -> None:
    with pytest.raises(SamzaError, match=r"unknown loop mode 'pool'.*inline, observed, thread_pool"):
        TestRunner.of(WordCount, mode="pool")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"name": ""}, "name must not be empty"),
        ({"name": "m", "thread_pool_size": -1}, "thread_pool_size=-1"),
        ({"name": "m", "max_concurrency": 0}, "max_concurrency=0"),
    ],
)
def test_a_bad_mode_is_refused_naming_the_field(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(SamzaError, match=message):
        LoopMode(**fields)
