"""Edge cases of applications a review found: inputs a task holds no partition of, operator tasks and
concurrency, session lateness, joins the grouper cannot co-locate."""

from __future__ import annotations

from typing import Any

import pytest

from samza_nb.errors import ConfigError, SamzaError
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Windows
from samza_nb.testing import LOOP_MODES, LoopMode, Message, TestRunner, Watermark


class MergeOfUnevenInputs(StreamApplication):
    """a (2 partitions) merged with b.map (1 partition), then counted in 10 ms windows."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        a = app.get_input_stream("a")
        b = app.get_input_stream("b").map(lambda m: m)
        (
            a.merge(b)
            .window(Windows.tumbling(10, init=lambda: 0, fold=lambda m, n: n + 1), "w")
            .map(lambda pane: (pane.start_ms, pane.value))
            .send_to(app.get_output_stream("out"))
        )


class MergeThenRepartition(StreamApplication):
    """The same merge, then a partition_by: its end-of-stream must reach the consumers."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        a = app.get_input_stream("a")
        b = app.get_input_stream("b").map(lambda m: m)
        (
            a.merge(b)
            .partition_by(lambda m: m, None, "p")
            .map(lambda kv: kv.value)
            .send_to(app.get_output_stream("out"))
        )


def values(output: dict[int, list[Any]]) -> list[Any]:
    return sorted(v for vs in output.values() for v in vs)


def test_an_input_the_task_holds_no_partition_of_holds_nothing_back_downstream() -> None:
    # Task "Partition 1" holds a#1 but no partition of b: the map after b must count as ended with the
    # highest watermark, or the merge never passes y's pane on.
    result = (
        TestRunner.of(MergeOfUnevenInputs)
        .add_input(
            "a",
            {0: [Message("x", timestamp=1), Watermark(20)], 1: [Message("y", timestamp=2), Watermark(20)]},
        )
        .add_input("b", {0: [Message("z", timestamp=3), Watermark(20)]})
        .add_output("out")
        .run(timeout=15)
    )
    assert values(result.output("out")) == [(0, 1), (0, 2)]


@pytest.mark.parametrize("grouper", ["group-by-partition", "group-by-ssp"])
def test_a_partition_by_after_an_input_the_task_does_not_hold_still_ends(grouper: str) -> None:
    result = (
        TestRunner.of(MergeThenRepartition)
        .add_input("a", {0: ["x"], 1: ["y"]})
        .add_input("b", {0: ["z"]})
        .add_output("out")
        .add_config({"job.systemstreampartition.grouper.factory": grouper})
        .run(timeout=15)
    )
    assert values(result.output("out")) == ["x", "y", "z"]


class Count(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        (
            app.get_input_stream("in")
            .window(Windows.tumbling(1_000_000, init=lambda: 0, fold=lambda m, n: n + 1), "w")
            .map(lambda pane: pane.value)
            .send_to(app.get_output_stream("out"))
        )


@pytest.mark.parametrize("mode", [m for m in LOOP_MODES if not m.for_applications], ids=str)
def test_an_application_refuses_concurrency_above_one(mode: LoopMode) -> None:
    runner = (
        TestRunner.of(Count, mode=mode)
        .add_input("in", [Message(1, timestamp=1)])
        .add_output("out")
        .add_config({"job.container.thread.pool.size": "4"})
    )
    with pytest.raises(ConfigError, match="task.max.concurrency") as info:
        runner.run(timeout=15)
    assert info.value.key == "task.max.concurrency"


@pytest.mark.parametrize("mode", [m for m in LOOP_MODES if m.for_applications], ids=str)
def test_an_application_counts_every_message_in_every_mode_it_can_run_in(mode: LoopMode) -> None:
    result = (
        TestRunner.of(Count, mode=mode)
        .add_input("in", [Message(i, timestamp=i) for i in range(2000)])
        .add_output("out")
        .run(timeout=30)
    )
    assert result.output("out") == {0: [2000]}


class Sessions(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        (
            app.get_input_stream("in")
            .window(Windows.session(10, init=list, fold=lambda m, acc: [*acc, m]), "s")
            .map(lambda pane: (pane.start_ms, pane.end_ms, pane.value))
            .send_to(app.get_output_stream("out"))
        )


def test_a_message_of_a_session_that_has_not_fired_is_not_late() -> None:
    # Session [0, 5] ends at 15 > watermark 12: it is still open, so c@1 (1 + gap <= 12) belongs to it.
    items = [
        Message("a", timestamp=0),
        Message("b", timestamp=5),
        Watermark(12),
        Message("c", timestamp=1),
        Message("d", timestamp=14),
    ]
    result = TestRunner.of(Sessions).add_input("in", items).add_output("out").run(timeout=15)
    (pane,) = result.output("out")[0]
    assert pane[0] == 0 and pane[1] == 24 and sorted(pane[2]) == ["a", "b", "c", "d"]


def test_a_session_message_after_its_session_fired_is_late() -> None:
    items = [
        Message("a", timestamp=0),
        Watermark(20),
        Message("late", timestamp=3),
        Message("b", timestamp=30),
    ]
    result = TestRunner.of(Sessions).add_input("in", items).add_output("out").run(timeout=15)
    assert result.output("out")[0] == [(0, 10, ["a"]), (30, 40, ["b"])]


class Join(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        a, b = app.get_input_stream("a"), app.get_input_stream("b")
        a.join(b, lambda m: m, lambda m: m, lambda x, y: (x, y), 1000, "j").send_to(
            app.get_output_stream("out")
        )


def test_a_join_the_grouper_cannot_co_locate_is_refused() -> None:
    runner = (
        TestRunner.of(Join)
        .add_input("a", [Message(1, timestamp=1)])
        .add_input("b", [Message(1, timestamp=2)])
        .add_output("out")
        .add_config({"job.systemstreampartition.grouper.factory": "group-by-ssp"})
    )
    with pytest.raises(SamzaError, match="join 'j'.*job.systemstreampartition.grouper.factory"):
        runner.run(timeout=15)


class TupleKeys(StreamApplication):
    """Repartitions by a tuple key and counts distinct values in a set, through the durable log."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        (
            app.get_input_stream("in")
            .partition_by(lambda m: (m["user"], m["day"]), lambda m: {m["page"]}, "by-user-day")
            .window(
                Windows.tumbling(
                    100, init=set, fold=lambda kv, acc: acc | kv.value, key_fn=lambda kv: kv.key
                ),
                "pages",
            )
            .map(lambda pane: (pane.key, sorted(pane.value)))
            .send_to(app.get_output_stream("out"))
        )


def test_values_cross_the_durable_log_as_sent_by_default(tmp_path: Any) -> None:
    items = [
        Message({"user": "ada", "day": 1, "page": p}, timestamp=t)
        for t, p in enumerate(["/", "/docs", "/", "/blog"])
    ]
    result = (
        TestRunner.of(TupleKeys)
        .add_input("in", items)
        .add_output("out")
        .add_config({"job.default.system": "log", "systems.log.log.dir": str(tmp_path / "log")})
        .run(timeout=30)
    )
    assert result.output("out") == {0: [(("ada", 1), ["/", "/blog", "/docs"])]}


def test_a_timestamp_fn_that_returns_no_int_is_named() -> None:
    class Bad(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            window = Windows.tumbling(
                10, init=lambda: 0, fold=lambda m, n: n + 1, timestamp_fn=lambda m: None
            )
            app.get_input_stream("in").window(window, "w").sink(lambda m, c, k: None)

    runner = TestRunner.of(Bad).add_input("in", [1])
    error = r"at test.in#0 offset 0: SamzaError: window 'w': timestamp_fn returned None"
    with pytest.raises(SamzaError, match=error):
        runner.run(timeout=15)


def test_an_op_id_like_the_planners_own_names_is_a_plain_op_id() -> None:
    class Named(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            keyed = (
                app.get_input_stream("in").map(lambda m: m, "input-in").partition_by(lambda m: m, None, "p")
            )
            keyed.map(lambda kv: kv.value, "p-input").send_to(app.get_output_stream("out"))

    result = TestRunner.of(Named).add_input("in", [1, 2]).add_output("out").run(timeout=15)
    assert values(result.output("out")) == [1, 2]


class Numbering(StreamApplication):
    """A map whose function keeps a count: each task must have its own."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        seen: list[int] = []

        def number(message: Any) -> tuple[Any, int]:
            seen.append(1)
            return (message, len(seen))

        app.get_input_stream("in").map(number).send_to(app.get_output_stream("out"))


def test_each_task_has_its_own_operator_functions() -> None:
    result = (
        TestRunner.of(Numbering).add_input("in", {0: ["a", "b"], 1: ["c", "d"]}).add_output("out").run(15)
    )
    assert values(result.output("out")) == [("a", 1), ("b", 2), ("c", 1), ("d", 2)]
