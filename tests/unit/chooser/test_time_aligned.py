"""The time-aligned chooser: smallest event time first, envelopes without time processed 'now'."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from samza_nb.api.streams import IncomingMessageEnvelope
from samza_nb.chooser import TimeAlignedChooser

from .support import envelope


def drain(chooser: TimeAlignedChooser) -> list[object]:
    out = []
    while (chosen := chooser.choose()) is not None:
        out.append(chosen.message)
    return out


def test_smallest_timestamp_first() -> None:
    chooser = TimeAlignedChooser()
    chooser.start()
    assert chooser.choose() is None
    chooser.update(envelope("views", 0, "0", "v@300", timestamp=300))
    chooser.update(envelope("clicks", 0, "0", "c@100", timestamp=100))
    chooser.update(envelope("views", 1, "0", "v1@200", timestamp=200))
    assert drain(chooser) == ["c@100", "v1@200", "v@300"]


def test_equal_timestamps_go_in_arrival_order() -> None:
    chooser = TimeAlignedChooser()
    for name in ["b", "a", "c"]:
        chooser.update(envelope(name, 0, "0", name, timestamp=5))
    assert drain(chooser) == ["b", "a", "c"]


def test_without_timestamps_it_is_fifo() -> None:
    chooser = TimeAlignedChooser()
    for name in ["x", "y", "z"]:
        chooser.update(envelope(name, 0, "0", name))
    assert drain(chooser) == ["x", "y", "z"]


def test_untimestamped_envelopes_are_processed_now_in_event_time() -> None:
    chooser = TimeAlignedChooser()
    # Before any timestamped choice, "now" is -infinity: the untimestamped envelope goes first.
    chooser.update(envelope("a", 0, "0", "a@10", timestamp=10))
    chooser.update(envelope("u", 0, "0", "u1"))
    assert chooser.choose().message == "u1"  # type: ignore[union-attr]
    assert chooser.choose().message == "a@10"  # type: ignore[union-attr]
    assert chooser.now == 10
    # Now = 10: an untimestamped envelope goes after held older ones and before newer ones.
    chooser.update(envelope("b", 0, "0", "b@5", timestamp=5))
    chooser.update(envelope("a", 0, "1", "a@20", timestamp=20))
    chooser.update(envelope("u", 0, "1", "u2"))
    chooser.update(envelope("c", 0, "0", "c@10", timestamp=10))
    assert drain(chooser) == ["b@5", "u2", "c@10", "a@20"]


def test_untimestamped_stream_is_not_starved() -> None:
    chooser = TimeAlignedChooser()
    timed = iter(range(0, 10_000, 10))
    chooser.update(envelope("t", 0, "0", "t", timestamp=next(timed)))
    chooser.update(envelope("u", 0, "0", "u"))
    seen = []
    for _ in range(20):
        chosen = chooser.choose()
        assert chosen is not None
        seen.append(chosen.message)
        # The container offers the chosen partition's next envelope right away.
        if chosen.message == "t":
            chooser.update(envelope("t", 0, "0", "t", timestamp=next(timed)))
        else:
            chooser.update(envelope("u", 0, "0", "u"))
    assert seen.count("u") >= 9


def test_timestamp_extractor() -> None:
    chooser = TimeAlignedChooser(timestamp_of=lambda env: env.message["ts"] if env.message else None)
    chooser.update(envelope("a", 0, "0", {"ts": 9}))
    chooser.update(envelope("b", 0, "0", {"ts": 3}))
    chooser.update(envelope("c", 0, "0", None))
    assert [m["ts"] if m else None for m in drain(chooser)] == [None, 3, 9]


def test_stop_drops_held_envelopes() -> None:
    chooser = TimeAlignedChooser()
    chooser.update(envelope("a", 0, "0", "a", timestamp=1))
    assert len(chooser) == 1
    chooser.stop()
    assert len(chooser) == 0
    assert chooser.choose() is None


@given(st.lists(st.integers(min_value=-(10**12), max_value=10**12), max_size=200))
def test_order_is_timestamp_then_arrival(timestamps: list[int]) -> None:
    chooser = TimeAlignedChooser()
    envelopes = [envelope("s", i, "0", i, timestamp=ts) for i, ts in enumerate(timestamps)]
    for env in envelopes:
        chooser.update(env)
    expected = [i for i, _ in sorted(enumerate(timestamps), key=lambda item: (item[1], item[0]))]
    assert drain(chooser) == expected


@given(st.lists(st.one_of(st.none(), st.integers(min_value=0, max_value=50)), max_size=100))
def test_every_envelope_comes_out_exactly_once(timestamps: list[int | None]) -> None:
    chooser = TimeAlignedChooser()
    envelopes: list[IncomingMessageEnvelope] = [
        envelope("s", i, "0", i, timestamp=ts) for i, ts in enumerate(timestamps)
    ]
    for env in envelopes:
        chooser.update(env)
    assert sorted(drain(chooser)) == list(range(len(timestamps)))  # type: ignore[type-var]
