"""Runs (the RunChooser protocol through SystemConsumers) give exactly the choices of plain update/choose."""

from __future__ import annotations

from collections import deque

from hypothesis import given, settings
from hypothesis import strategies as st

from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
from samza_nb.chooser import BatchingChooser, RoundRobinChooser
from samza_nb.container.consumers import SystemConsumers


def buffers_of(sizes: list[int]) -> dict[SystemStreamPartition, deque[IncomingMessageEnvelope]]:
    result = {}
    for partition, size in enumerate(sizes):
        ssp = SystemStreamPartition("kafka", "s", partition)
        result[ssp] = deque(IncomingMessageEnvelope(ssp, str(i), None, i) for i in range(size))
    return result


def plain_order(sizes: list[int], batch: int) -> list[tuple[int, str]]:
    buffers = buffers_of(sizes)
    chooser = BatchingChooser(RoundRobinChooser(), batch)
    for buffer in buffers.values():
        if buffer:
            chooser.update(buffer.popleft())
    order = []
    while (envelope := chooser.choose()) is not None:
        order.append((envelope.ssp.partition, envelope.offset))
        buffer = buffers[envelope.ssp]
        if buffer:
            chooser.update(buffer.popleft())
    return order


@settings(max_examples=200, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=0, max_value=12), min_size=1, max_size=4),
    batch=st.integers(min_value=1, max_value=6),
    cap=st.integers(min_value=0, max_value=7),
)
def test_runs_through_the_consumers_choose_what_update_and_choose_would(
    sizes: list[int], batch: int, cap: int
) -> None:
    """SystemConsumers.choose_run/take_run/end_run (what the pump uses) against plain update/choose."""
    buffers = buffers_of(sizes)
    consumers = SystemConsumers(BatchingChooser(RoundRobinChooser(), batch), {})
    for ssp, buffer in buffers.items():
        consumers.buffers[ssp] = buffer
        if buffer:
            consumers.chooser.update(buffer.popleft())
    order = []
    while True:
        envelope, room = consumers.choose_run()
        if envelope is None:
            break
        order.append((envelope.ssp.partition, envelope.offset))
        if room and cap:
            order.extend(
                (e.ssp.partition, e.offset) for e in consumers.take_run(envelope.ssp, min(room, cap))
            )
            consumers.end_run()
        else:
            consumers.refill(envelope.ssp)
    assert order == plain_order(sizes, batch)


def test_room_is_what_is_left_of_the_batch() -> None:
    buffers = buffers_of([5])
    chooser = BatchingChooser(RoundRobinChooser(), 3)
    (ssp,) = buffers
    chooser.update(buffers[ssp].popleft())
    envelope, room = chooser.choose_run()
    assert envelope is not None and room == 2
    chooser.end_run(2)
    assert chooser.preferred_ssp is None and chooser.batch_resets == 1
