"""The interval join with a TTL: matches within the TTL in both arrival orders, none beyond it, purge on
the watermark (event time) and on the window timer (processing time), state kept across a restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.operators import StreamApplication, StreamApplicationDescriptor
from tests.unit.operators.harness import Driver, plan_for

LEFT = SystemStreamPartition("test", "left", 0)
RIGHT = SystemStreamPartition("test", "right", 0)


class Joined(StreamApplication):
    """Left and right messages ``(key, value)`` joined on key within 10 ms, as ``(left, right)``."""

    def describe(self, app: StreamApplicationDescriptor) -> None:
        left = app.get_input_stream("left")
        right = app.get_input_stream("right")
        (
            left.join(
                right,
                key_fn=lambda m: m[0],
                other_key_fn=lambda m: m[0],
                join_fn=lambda m, o: (m[1], o[1]),
                ttl_ms=10,
                op_id="j",
            ).send_to(app.get_output_stream("out"))
        )


def driver(tmp_path: Path, **kwargs: Any) -> Driver:
    plan = plan_for(Joined, {"left": 1, "right": 1})
    return Driver(Joined, plan, "Partition 0", [LEFT, RIGHT], tmp_path, **kwargs)


def joined(d: Driver) -> list[Any]:
    return [(e.message, e.timestamp) for e in d.take()]


def test_matches_within_the_ttl_in_both_arrival_orders(tmp_path: Path) -> None:
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.message(RIGHT, ("k", "x"), 105)
    assert joined(d) == [(("a", "x"), 105)]
    d.message(RIGHT, ("q", "y"), 200)
    d.message(LEFT, ("q", "b"), 190)
    assert joined(d) == [(("b", "y"), 200)]  # left's message first, the later time


def test_no_match_beyond_the_ttl_or_across_keys(tmp_path: Path) -> None:
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.message(RIGHT, ("k", "late"), 111)
    d.message(RIGHT, ("k", "early"), 89)
    d.message(RIGHT, ("other", "x"), 100)
    assert joined(d) == []
    d.message(RIGHT, ("k", "edge"), 110)
    assert joined(d) == [(("a", "edge"), 110)]


def test_every_kept_partner_matches(tmp_path: Path) -> None:
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.message(LEFT, ("k", "b"), 104)
    d.message(RIGHT, ("k", "x"), 102)
    assert joined(d) == [(("a", "x"), 102), (("b", "x"), 104)]


def test_the_watermark_purges_kept_messages(tmp_path: Path) -> None:
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.message(LEFT, ("k", "b"), 108)
    d.watermark(LEFT, 111)
    d.watermark(RIGHT, 111)  # the join's input watermark: min of both sides
    assert d.task.metrics["operators"]["j"]["purged"] == 1  # 100 + 10 < 111
    d.message(RIGHT, ("k", "x"), 112)
    assert joined(d) == [(("b", "x"), 112)]
    d.message(RIGHT, ("k", "stale"), 100)  # 100 + 10 < 111: joins what is kept, is not kept itself
    assert joined(d) == [(("b", "stale"), 108)]
    d.message(LEFT, ("k", "c"), 112)
    assert joined(d) == [(("c", "x"), 112)]
    assert d.task.metrics["operators"]["j"]["late"] == 1


def test_without_watermarks_the_timer_purges_behind_the_latest_event_time(tmp_path: Path) -> None:
    # Records of the durable log or Kafka carry a time but no watermark ever comes: the kept side must
    # not grow forever. The timer purges what is more than ttl older than the latest time minus ttl.
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.message(LEFT, ("k", "b"), 115)
    d.message(RIGHT, ("other", "x"), 121)  # 100 + 10 < 121 - 10: "a" goes; 115 + 10 >= 111: "b" stays
    d.window()
    assert d.task.metrics["operators"]["j"]["purged"] == 1
    d.message(RIGHT, ("k", "y"), 118)
    assert joined(d) == [(("b", "y"), 118)]


def test_one_side_watermark_alone_purges_nothing(tmp_path: Path) -> None:
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.watermark(LEFT, 500)
    d.message(RIGHT, ("k", "x"), 101)
    assert joined(d) == [(("a", "x"), 101)]


def test_a_restart_keeps_the_stored_side(tmp_path: Path) -> None:
    d = driver(tmp_path)
    d.message(LEFT, ("k", "a"), 100)
    d.message(RIGHT, ("q", "x"), 300)
    d.restart()
    d.message(RIGHT, ("k", "y"), 105)
    d.message(LEFT, ("q", "b"), 301)
    assert joined(d) == [(("a", "y"), 105), (("b", "x"), 301)]
    d.close()


def test_without_timestamps_the_join_runs_on_processing_time(tmp_path: Path) -> None:
    d = driver(tmp_path, now=1000)
    d.message(LEFT, ("k", "a"))
    d.now = 1010
    d.message(RIGHT, ("k", "x"))
    assert joined(d) == [(("a", "x"), 1010)]
    d.now = 1011
    d.window()  # 1000 + 10 < 1011: "a" goes
    d.message(RIGHT, ("k", "y"))
    assert joined(d) == []
    d.message(LEFT, ("k", "b"))
    assert joined(d) == [(("b", "x"), 1011), (("b", "y"), 1011)]


class SelfJoined(StreamApplication):
    def describe(self, app: StreamApplicationDescriptor) -> None:
        s = app.get_input_stream("left")
        s.join(s, lambda m: m[0], lambda m: m[0], lambda m, o: (m[1], o[1]), 5, "j").send_to(
            app.get_output_stream("out")
        )


def test_a_stream_joined_with_itself(tmp_path: Path) -> None:
    d = Driver(SelfJoined, plan_for(SelfJoined, {"left": 1}), "Partition 0", [LEFT], tmp_path)
    d.message(LEFT, ("k", "a"), 1)
    d.message(LEFT, ("k", "b"), 3)
    assert sorted(m for m, _ in joined(d)) == [("a", "a"), ("a", "b"), ("b", "a"), ("b", "b")]
