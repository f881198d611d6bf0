"""Choosers at work in a job (issue 3): bootstrap, priority, batching, time alignment, decision events."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb import ConfigError
from samza_nb.chooser.trace import ChoiceTrace
from samza_nb.observe.events import ChooserDecision
from samza_nb.testing import LOOP_MODES, LoopMode, Message, TestRunner


class Log:
    """A task recording (stream, partition, offset, value) of every message, shared by all tasks."""

    def __init__(self, log: list[tuple[str, int, str, Any]]) -> None:
        self.log = log

    def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
        self.log.append((envelope.ssp.stream, envelope.ssp.partition, envelope.offset, envelope.message))


def run_logged(runner_setup: Any, mode: LoopMode) -> list[tuple[str, int, str, Any]]:
    log: list[tuple[str, int, str, Any]] = []
    runner = runner_setup(TestRunner.of(lambda: Log(log), mode=mode))
    runner.run(timeout=20)
    return log


def of_task(log: list[tuple[str, int, str, Any]], partition: int) -> list[tuple[str, int, str, Any]]:
    """The entries of the task of ``partition`` (one task per partition here). On a thread pool the tasks
    run in parallel, so the chooser's order holds per task (Samza's blockIfBusy), not across tasks."""
    return [entry for entry in log if entry[1] == partition]


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_bootstrap_stream_is_read_to_its_head_before_any_other_message(mode: LoopMode) -> None:
    log = run_logged(
        lambda r: (
            r.add_input("events", {0: list(range(20)), 1: list(range(20))})
            .add_input("table", {0: [f"t{i}" for i in range(30)], 1: [f"u{i}" for i in range(5)]})
            .add_config({"systems.test.streams.table.samza.bootstrap": "true"})
        ),
        mode,
    )
    for partition, table in ((0, 30), (1, 5)):
        assert [stream for stream, *_ in of_task(log, partition)] == ["table"] * table + ["events"] * 20
    if not mode.thread_pool_size:
        streams = [stream for stream, *_ in log]
        assert streams[:35] == ["table"] * 35
        assert streams[35:] == ["events"] * 40


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_priority_stream_is_preferred_while_it_has_messages(mode: LoopMode) -> None:
    log = run_logged(
        lambda r: (
            r.add_input("low", list(range(50)))
            .add_input("high", list(range(50)))
            .add_config({"systems.test.streams.high.samza.priority": "5"})
        ),
        mode,
    )
    streams = [stream for stream, *_ in log]
    assert streams == ["high"] * 50 + ["low"] * 50


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_the_seeds_priority_key_works_too(mode: LoopMode) -> None:
    log = run_logged(
        lambda r: (
            r.add_input("low", list(range(10)))
            .add_input("high", list(range(10)))
            .add_config({"task.chooser.priorities.test.high": "1"})
        ),
        mode,
    )
    assert [stream for stream, *_ in log][:10] == ["high"] * 10


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_batch_size_yields_runs_of_n_from_one_partition(mode: LoopMode) -> None:
    log = run_logged(
        lambda r: r.add_input("in", {0: list(range(12)), 1: list(range(12))}).add_config(
            {"task.consumer.batch.size": "3"}
        ),
        mode,
    )
    for partition in (0, 1):
        assert [offset for _, _, offset, _ in of_task(log, partition)] == [str(i) for i in range(12)]
    if not mode.thread_pool_size:
        partitions = [partition for _, partition, *_ in log]
        runs = [partitions[i : i + 3] for i in range(0, 24, 3)]
        assert all(len(set(run)) == 1 for run in runs), partitions
        assert [run[0] for run in runs] == [0, 1, 0, 1, 0, 1, 0, 1]


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_time_aligned_chooser_merges_streams_in_timestamp_order(mode: LoopMode) -> None:
    clicks = [Message(f"c{t}", timestamp=t) for t in range(0, 100, 3)]
    views = [Message(f"v{t}", timestamp=t) for t in range(1, 100, 2)]
    log: list[tuple[str, int, str, Any]] = []

    class Stamped:
        def process(self, envelope: Any, collector: Any, coordinator: Any) -> None:
            log.append(envelope.timestamp)

    (
        TestRunner.of(Stamped, mode=mode)
        .add_input("clicks", clicks)
        .add_input("views", views)
        .add_config({"task.chooser.time.aligned": "true"})
        .run()
    )
    assert log == sorted(log) and len(log) == len(clicks) + len(views)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("systems.test.streams.in.samza.priority", "high"),
        ("task.consumer.batch.size", "-2"),
        ("systems.test.streams.elsewhere.samza.bootstrap", "true"),
        ("systems.test.streams.elsewhere.samza.priority", "3"),
    ],
)
def test_bad_chooser_config_is_a_config_error_naming_the_key(key: str, value: str) -> None:
    with pytest.raises(ConfigError) as info:
        TestRunner.of(lambda: Log([])).add_input("in", [1]).add_config({key: value}).run()
    assert key in str(info.value)


def test_decision_events_explain_the_choice() -> None:
    events: list[Any] = []
    (
        TestRunner.of(lambda: Log([]))
        .add_input("events", list(range(3)))
        .add_input("table", list(range(3)))
        .add_config({"systems.test.streams.table.samza.bootstrap": "true", "task.consumer.batch.size": "2"})
        .subscribe(events.append)
        .run()
    )
    decisions = [e for e in events if isinstance(e, ChooserDecision)]
    assert len(decisions) == 8  # 6 messages + 2 end-of-stream envelopes
    traces = [d.trace for d in decisions]
    assert all(isinstance(t, ChoiceTrace) for t in traces)
    first = traces[0]
    assert str(first.ssp) == "test.table#0"
    assert {str(ssp) for ssp, _ in first.candidates} == {"test.table#0", "test.events#0"}
    tiers = dict((str(ssp), tier) for ssp, tier in first.candidates)
    assert tiers["test.table#0"] > tiers["test.events#0"]
    assert any(t.held_by_batching for t in traces)
    assert [str(d.ssp.stream) for d in decisions[:4]] == ["table"] * 4


@pytest.mark.parametrize("mode", LOOP_MODES, ids=str)
def test_a_custom_chooser_class_is_used(mode: LoopMode) -> None:
    log = run_logged(
        lambda r: r.add_input("in", {0: list(range(3)), 1: list(range(3))}).add_config(
            {"task.chooser.class": "tests.unit.container.test_choosers_in_jobs.LastPartitionFirst"}
        ),
        mode,
    )
    assert len(of_task(log, 1)) == 3
    if not mode.thread_pool_size:
        assert [partition for _, partition, *_ in log][:3] == [1, 1, 1]


class LastPartitionFirst:
    """A chooser class (the second plug-in shape: no from_config, built without arguments): prefers the
    highest partition number."""

    def __init__(self, config: Any = None, *args: Any) -> None:
        self.held: dict[Any, Any] = {}

    def register(self, ssp: Any, offset: Any) -> None:
        pass

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def update(self, envelope: Any) -> None:
        self.held[envelope.ssp] = envelope

    def choose(self) -> Any:
        if not self.held:
            return None
        ssp = max(self.held, key=lambda s: s.partition)
        return self.held.pop(ssp)


def test_a_sampled_observer_gets_some_decisions_with_reasons() -> None:
    sampled: list[Any] = []
    (
        TestRunner.of(lambda: Log([]))
        .add_input("in", {0: list(range(3000)), 1: list(range(3000))})
        .add_config({"task.consumer.batch.size": "10", "systems.test.streams.in.samza.priority": "2"})
        .subscribe(sampled.append, events=[ChooserDecision], sampled=True)
        .run()
    )
    assert 0 < len(sampled) < 600  # about one per slice of work, not one per message
    assert all(isinstance(e.trace, ChoiceTrace) and e.trace.ssp == e.ssp for e in sampled)
    assert {e.trace.tier for e in sampled} == {2}


def test_a_sampled_subscription_keeps_the_per_message_path_off() -> None:
    from samza_nb.observe import EventBus

    bus = EventBus()
    unsubscribe = bus.subscribe(lambda event: None, events=[ChooserDecision], sampled=True)
    assert bus.sampled and not bus.per_message
    unsubscribe()
    assert not bus.sampled
