"""Tumbling and session windows: firing on the watermark, at end-of-stream and on the window timer;
late messages, empty panes, keys seen once, bridged sessions, restarts in the middle of a window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.errors import SamzaError
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor, Window, Windows
from samza_nb.testing.runner import Message
from tests.unit.operators.harness import Driver, app_runner, plan_for

IN = SystemStreamPartition("test", "in", 0)


def collect(message: Any, acc: list[Any]) -> list[Any]:
    return [*acc, message[1]]


def app_with(window: Window) -> type[StreamApplication]:
    """An application windowing stream "in" (messages ``(key, value)``) and sending each pane as
    ``(key, start, end, [values])`` to "out"."""

    class Windowed(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            (
                app.get_input_stream("in")
                .window(window, "w")
                .map(lambda p: (p.key, p.start_ms, p.end_ms, p.value))
                .send_to(app.get_output_stream("out"))
            )

    return Windowed


TUMBLING = app_with(Windows.tumbling(10, list, collect, key_fn=lambda m: m[0]))
SESSION = app_with(Windows.session(10, list, collect, key_fn=lambda m: m[0]))


def driver(app: type[StreamApplication], tmp_path: Path, **kwargs: Any) -> Driver:
    return Driver(app, plan_for(app, {"in": 1}), "Partition 0", [IN], tmp_path, **kwargs)


def panes(d: Driver) -> list[tuple[Any, ...]]:
    return [e.message for e in d.take()]


def metrics(d: Driver) -> dict[str, int]:
    return dict(d.task.metrics["operators"]["w"])


# -- tumbling ---------------------------------------------------------------------------------------------
def test_tumbling_panes_fire_when_the_watermark_reaches_their_end(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    for value, ts in (("a1", 1), ("b2", 2), ("a3", 5), ("a4", 12)):
        d.message(IN, (value[0], value), ts)
    d.watermark(IN, 9)
    assert panes(d) == []
    d.watermark(IN, 10)
    sent = d.take()
    assert [e.message for e in sent] == [("a", 0, 10, ["a1", "a3"]), ("b", 0, 10, ["b2"])]
    assert [e.timestamp for e in sent] == [9, 9]  # a pane's time is its end - 1
    d.message(IN, ("b", "b6"), 15)
    d.watermark(IN, 25)
    assert panes(d) == [("a", 10, 20, ["a4"]), ("b", 10, 20, ["b6"])]
    d.message(IN, ("a", "a7"), 27)
    d.end(IN)
    assert panes(d) == [("a", 20, 30, ["a7"])]
    assert metrics(d) == {"late": 0, "panes": 5}
    assert d.coordinator.requested  # every partition ended: commit and vote to stop


def test_tumbling_late_messages_are_dropped_and_counted(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    d.message(IN, ("a", "on-time"), 3)
    d.watermark(IN, 10)
    assert panes(d) == [("a", 0, 10, ["on-time"])]
    d.message(IN, ("a", "late"), 9)  # its pane [0, 10) fired
    d.message(IN, ("a", "not late"), 10)  # behind nothing: pane [10, 20)
    d.end(IN)
    assert panes(d) == [("a", 10, 20, ["not late"])]
    assert metrics(d) == {"late": 1, "panes": 2}


def test_tumbling_empty_panes_are_never_emitted(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    d.message(IN, ("a", "x"), 1)
    d.message(IN, ("a", "y"), 35)
    d.watermark(IN, 50)
    assert panes(d) == [("a", 0, 10, ["x"]), ("a", 30, 40, ["y"])]


def test_tumbling_end_of_stream_fires_the_rest_in_end_then_key_order(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    for key, ts in (("b", 1), ("a", 2), ("c", 15), ("a", 16)):
        d.message(IN, (key, ts), ts)
    d.end(IN)
    assert panes(d) == [("a", 0, 10, [2]), ("b", 0, 10, [1]), ("a", 10, 20, [16]), ("c", 10, 20, [15])]


def test_keys_that_do_not_compare_fire_first_seen_first(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    d.message(IN, ("x", 1), 1)
    d.message(IN, (None, 2), 2)
    d.message(IN, (3, 3), 3)
    d.end(IN)
    assert panes(d) == [("x", 0, 10, [1]), (None, 0, 10, [2]), (3, 0, 10, [3])]


def test_a_window_without_key_fn_has_one_pane_per_window(tmp_path: Path) -> None:
    app = app_with(Windows.tumbling(10, lambda: 0, lambda m, acc: acc + 1))
    d = driver(app, tmp_path)
    for ts in (1, 2, 11):
        d.message(IN, ("k", ts), ts)
    d.end(IN)
    assert panes(d) == [(None, 0, 10, 2), (None, 10, 20, 1)]


def test_a_message_without_timestamp_names_the_op_partition_and_offset(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    d.message(IN, ("a", 1), 1)
    with pytest.raises(SamzaError, match=r"window 'w'.*offset 1 of test\.in#0"):
        d.message(IN, ("a", 2), None)


def test_timestamp_fn_gives_the_event_time(tmp_path: Path) -> None:
    app = app_with(Windows.tumbling(10, list, collect, key_fn=lambda m: m[0], timestamp_fn=lambda m: m[2]))
    d = driver(app, tmp_path)
    d.message(IN, ("a", "x", 25), None)
    d.watermark(IN, 30)
    assert panes(d) == [("a", 20, 30, ["x"])]


def test_restart_in_the_middle_of_a_tumbling_window_continues_the_pane(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    d.message(IN, ("a", 1), 1)
    d.message(IN, ("a", 2), 2)
    d.restart()
    d.message(IN, ("a", 3), 3)
    d.restart(commit=False)  # what was not committed is lost (the input is read again)
    d.message(IN, ("a", 4), 4)
    d.watermark(IN, 10)
    assert panes(d) == [("a", 0, 10, [1, 2, 4])]
    d.close()


def test_a_restart_keeps_the_watermark_so_late_stays_late(tmp_path: Path) -> None:
    d = driver(TUMBLING, tmp_path)
    d.message(IN, ("a", 1), 1)
    d.watermark(IN, 10)
    assert panes(d) == [("a", 0, 10, [1])]
    d.restart()
    d.message(IN, ("a", "late"), 5)
    d.message(IN, ("a", 11), 11)
    d.end(IN)
    assert panes(d) == [("a", 10, 20, [11])]
    assert metrics(d)["late"] == 1
    d.close()


def test_processing_time_tumbling_fires_on_the_window_timer(tmp_path: Path) -> None:
    app = app_with(Windows.tumbling(10, list, collect, key_fn=lambda m: m[0], time="processing"))
    d = driver(app, tmp_path, now=1003.5)
    d.message(IN, ("a", 1))
    d.message(IN, ("a", 2), 5)  # processing time ignores event time
    d.now = 1009
    d.window()
    assert panes(d) == []
    d.now = 1010
    d.message(IN, ("a", 3))
    d.window()
    assert panes(d) == [("a", 1000, 1010, [1, 2])]
    d.end(IN)
    assert panes(d) == [("a", 1010, 1020, [3])]


# -- session ----------------------------------------------------------------------------------------------
def test_a_key_seen_once_fires_at_its_gap(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    d.message(IN, ("a", 1), 1)
    d.watermark(IN, 10)
    assert panes(d) == []
    d.watermark(IN, 11)
    assert panes(d) == [("a", 1, 11, [1])]


def test_a_session_grows_while_messages_are_closer_than_the_gap(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    for ts in (1, 5, 14):
        d.message(IN, ("a", ts), ts)
    d.message(IN, ("b", 2), 2)
    d.watermark(IN, 23)
    assert panes(d) == [("b", 2, 12, [2])]
    d.watermark(IN, 24)
    assert panes(d) == [("a", 1, 24, [1, 5, 14])]


def test_messages_a_gap_apart_start_a_new_session(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    d.message(IN, ("a", 1), 1)
    d.message(IN, ("a", 11), 11)
    d.watermark(IN, 30)
    assert panes(d) == [("a", 1, 11, [1]), ("a", 11, 21, [11])]


def test_a_message_bridging_two_sessions_merges_them(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    d.message(IN, ("a", 1), 1)
    d.message(IN, ("a", 18), 18)
    d.watermark(IN, 11)  # [1, 11) could fire now: it does
    assert panes(d) == [("a", 1, 11, [1])]
    d.message(IN, ("a", 25), 25)
    d.message(IN, ("a", 40), 40)
    d.message(IN, ("a", 32), 32)  # 25 ... 32 ... 40: bridges [18, 35) and [40, 50)
    d.watermark(IN, 49)
    assert panes(d) == []
    d.watermark(IN, 50)
    assert panes(d) == [("a", 18, 50, [18, 25, 40, 32])]


def test_an_out_of_order_message_extends_a_session_backwards(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    d.message(IN, ("a", 20), 20)
    d.message(IN, ("a", 12), 12)
    d.message(IN, ("a", 3), 3)
    d.end(IN)
    assert panes(d) == [("a", 3, 30, [20, 12, 3])]


def test_session_late_messages_are_dropped(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    d.watermark(IN, 30)
    d.message(IN, ("a", "late"), 15)  # its session would end at 25 <= 30
    d.message(IN, ("a", "ok"), 25)  # ends at 35
    d.end(IN)
    assert panes(d) == [("a", 25, 35, ["ok"])]
    assert metrics(d) == {"late": 1, "panes": 1}


def test_restart_in_the_middle_of_a_session_continues_it(tmp_path: Path) -> None:
    d = driver(SESSION, tmp_path)
    d.message(IN, ("a", 1), 1)
    d.message(IN, ("b", 2), 2)
    d.watermark(IN, 5)
    d.restart()
    d.message(IN, ("a", 8), 8)
    d.watermark(IN, 12)
    assert panes(d) == [("b", 2, 12, [2])]
    d.end(IN)
    assert panes(d) == [("a", 1, 18, [1, 8])]
    d.close()


# -- through the container ------------------------------------------------------------------------------
def test_two_runs_over_the_same_state_continue_a_window(tmp_path: Path) -> None:
    first = [Message(("a", 1), timestamp=1), Message(("a", 2), timestamp=2), Message("stop", timestamp=3)]

    class Stopping(StreamApplication):
        def describe(self, app: StreamApplicationDescriptor) -> None:
            def stop_at(message: Any, collector: Any, coordinator: Any) -> None:
                from samza_nb.api.task import RequestScope

                coordinator.commit(RequestScope.CURRENT_TASK)
                coordinator.shutdown(RequestScope.ALL_TASKS_IN_CONTAINER)

            stream = app.get_input_stream("in")
            stream.filter(lambda m: m == "stop").sink(stop_at)
            (
                stream.filter(lambda m: m != "stop")
                .window(Windows.tumbling(10, list, collect, key_fn=lambda m: m[0]), "w")
                .map(lambda p: (p.key, p.start_ms, p.end_ms, p.value))
                .send_to(app.get_output_stream("out"))
            )

    state = {"job_logged_store_base_dir": str(tmp_path)}
    assert app_runner(Stopping, {"in": {0: first}}, **state).run().output("out") == {0: []}
    second = [*first, Message(("a", 4), timestamp=4), Message(("b", 12), timestamp=12)]
    result = app_runner(Stopping, {"in": {0: second}}, **state).run()
    assert result.output("out") == {0: [("a", 0, 10, [1, 2, 4]), ("b", 10, 20, [12])]}
