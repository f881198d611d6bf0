"""Rounds: the inline path of sync tasks when a round-robin chooser cycles over several partitions.

With several partitions, a chooser that goes in rounds (:meth:`RunChooser.choose_round`) chooses their
envelopes in a fixed cycle. :func:`run_round` processes the envelopes the chooser holds and then whole
further rounds taken straight from the partitions' buffers, in exactly the order the chooser would have
chosen them one at a time, and gives the chooser back what the one-at-a-time path would have left in it.
"""

from __future__ import annotations

import functools
from itertools import chain
from typing import TYPE_CHECKING

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.codegen import compile_function
from samza_nb.container.loop.hooks import Outcome, Row

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.task_instance import TaskInstance


def run_round(
    state: LoopState,
    first: IncomingMessageEnvelope,
    rest: Sequence[IncomingMessageEnvelope],
    limit: int,
    room: int,
) -> int:
    """``first`` was just chosen, with no room, for a task on the inline run path, and ``rest`` is the rest
    of its round (:meth:`SystemConsumers.choose_round`, with the ``room`` of further rows): process them
    and up to ``room`` further rows, up to ``limit`` messages in all. Returns how many messages were
    processed (the caller counts them in the loop's total); a failure or a coordinator request ends the
    round early (the failure is recorded, the requests applied).

    Only envelopes whose tasks are on the inline run path are processed here: the round stops before the
    first that is not (an end-of-stream, a parked or busy task), which the chooser gets back and hands
    to the general path next.
    """
    consumers = state.consumers
    held = [first, *rest]
    route = state.route
    tasks: list[TaskInstance] = []
    for envelope in held[: max(limit, 1)]:
        ti = route[envelope.ssp]
        if not ti.runs_inline or ti.coroutine or ti.check_start or envelope.offset == END_OF_STREAM_OFFSET:
            break
        tasks.append(ti)
    width = len(tasks)
    ssps = [envelope.ssp for envelope in held[:width]]
    rows: Iterable[Row] = ()
    if width == len(held) and width > 1:
        rows = consumers.take_rows(ssps, min(room, (limit - width) // width))
    outcome = _process_rows(tasks, chain((tuple(held[:width]),), rows))
    state.schedule.ran_round(tasks, held[:width], outcome)  # record/replay (loop/hooks.py)
    return _close_round(state, tasks, ssps, held[width:], outcome)


MAX_UNROLLED = 64
"""The widest round processed by a loop compiled for its width; wider ones take a generic loop."""


def _process_rows(tasks: list[TaskInstance], rows: Iterable[Row]) -> Outcome:
    """Process ``rows`` in order (each row's envelope ``i`` with ``tasks[i]``), stopping right after a call
    that made a coordinator request or at a call that raised."""
    targets = [(ti.process, ti.collector, ti.coordinator) for ti in tasks]
    if len(targets) <= MAX_UNROLLED:
        return _unrolled(len(targets))(rows, *(part for target in targets for part in target))
    done = 0
    previous: Row | None = None
    for row in rows:
        for position, (target, envelope) in enumerate(zip(targets, row, strict=True)):
            process, collector, coordinator = target
            try:
                process(envelope, collector, coordinator)
            except Exception as exc:
                return done, position, row, previous, exc
            if coordinator.requested:
                return done, position, row, previous, None
        done += 1
        previous = row
    return done, -1, None, previous, None


@functools.cache
def _unrolled(width: int) -> Callable[..., Outcome]:
    """The loop of :func:`_process_rows` for rounds of ``width``, compiled with one local variable per
    task and envelope: a round-robin job's hottest code, several times faster than a generic inner loop
    (which pays an iterator, a tuple and an unpacking per message)."""
    envelopes = ", ".join(f"e{i}" for i in range(width))
    lines = [
        f"def process_rows(rows, {', '.join(f'p{i}, c{i}, k{i}' for i in range(width))}):",
        "    done = 0",
        "    previous = None",
        "    for row in rows:",
        f"        {envelopes}, = row",
    ]
    for i in range(width):
        lines += [
            "        try:",
            f"            p{i}(e{i}, c{i}, k{i})",
            "        except Exception as exc:",
            f"            return done, {i}, row, previous, exc",
            f"        if k{i}.requested:",
            f"            return done, {i}, row, previous, None",
        ]
    lines += ["        done += 1", "        previous = row", "    return done, -1, None, previous, None"]
    function: Callable[..., Outcome] = compile_function("process_rows", "\n".join(lines), f"round of {width}")
    return function


def _close_round(
    state: LoopState,
    tasks: list[TaskInstance],
    ssps: list[SystemStreamPartition],
    not_started: list[IncomingMessageEnvelope],
    outcome: Outcome,
) -> int:
    """Account for the rows processed (low watermarks, counts), give the chooser back what the
    one-at-a-time path would have left in it, then record the failure or apply the requests."""
    done, position, row, last, error = outcome
    started = finished = 0  # positions of the stopping row started, and processed without error
    if row is not None:
        started = position + 1
        finished = started if error is None else position
    total = 0
    for i, ti in enumerate(tasks):
        if i < finished:
            assert row is not None
            envelope: IncomingMessageEnvelope | None = row[i]
            count = done + 1
        else:
            envelope = last[i] if last is not None else None
            count = done
        ti.record_run(ssps[i], count, envelope.offset if envelope is not None else None)
        total += count
    if row is None:
        state.consumers.end_round(not_started, ssps)
        return total
    state.consumers.end_round([*row[started:], *not_started], ssps[:started])
    ti = tasks[position]
    if error is not None:
        envelope = row[position]
        state.fail(ti, envelope.ssp, envelope.offset, error, "process")
    else:
        state.take_requests(ti.coordinator)
    return total
