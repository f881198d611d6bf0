"""The sampler of a job's event time: a :class:`~.views.TimeView` with each JobView of a container
that runs an application (:class:`TimeSampler`), and the same view of a job of several containers from
what each reports (:class:`TimeViews`, for ``%samza_time``).

It runs on the job's loop thread with the monitor's timer (never per message): at each sample it asks
every operator task for its :meth:`~samza_nb.operators.task.StreamOperatorTask.event_time` (each
container's own loop, for a job of several: :mod:`samza_nb.operators.impl.time_probe`) and adds what the
tasks do not know:

- the newest event time seen on each input stream: the largest timestamp among the sampled messages (the
  observe bus's :class:`~samza_nb.observe.events.MessageTaken`, about one per slice of work) and the
  partitions' watermarks, so ``behind`` is how far a partition's watermark trails its stream's newest event;
- when anything last came from each partition (its processed count, control messages included, or its
  watermark moved), from one sample to the next;
- which partitions hold back a watermark: of a source stream's partitions (not ended), those whose
  watermark is the lowest while another's is higher. Whatever combines them (a task of several of them, a
  ``partition_by`` whose consumers take the minimum over their producers, a join) waits for them. The line
  naming one says how far behind it is and since when nothing came from it, so the idle-partition case
  (a partition that stops sending) is named in the first view after it falls behind.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from samza_nb.container.queries.reader import StoreNotReady
from samza_nb.notebook.display.event_time.views import (
    OpenWindowView,
    OperatorTimeView,
    PartitionTimeView,
    TimeView,
    mark,
)
from samza_nb.notebook.display.samplers import short
from samza_nb.operators.impl.time_probe import ContainerTime, NewestEvents, operator_times

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.container.container import SamzaContainer
    from samza_nb.container.status import ContainerStatus
    from samza_nb.operators.impl.time_view import InputTime, OperatorTime, TaskTime


class TimeViews:
    """Builds the TimeViews of a job from its containers' event time (one container's, or the union of
    several's: :class:`~samza_nb.operators.impl.time_probe.ContainerTime`), keeping between two views what
    it needs: when each partition last moved, and each task's last snapshot (a task whose snapshot could
    not be read this time shows its last one)."""

    def __init__(self) -> None:
        self._seen: dict[SystemStreamPartition, tuple[int, int]] = {}  # (processed, watermark) last sample
        self._moved_ms: dict[SystemStreamPartition, float] = {}
        self._tasks: dict[str, TaskTime] = {}

    def build(self, time: ContainerTime, now_ms: float) -> TimeView | None:
        """The event time of the job now (None when it runs no application's operators)."""
        self._tasks.update(time.tasks)
        if not self._tasks:
            return None
        processed = time.processed
        inputs = [(t.task, i) for t in self._tasks.values() for i in t.inputs]
        for _, i in inputs:
            self._track(i, processed.get(i.ssp, (0, False))[0], now_ms)
        newest = self._newest_by_stream(inputs, time.newest)
        holders = self._holders(inputs, processed)
        partitions = tuple(
            self._partition(
                task, i, newest.get(i.ssp.system_stream), (task, i.ssp) in holders, processed, now_ms
            )
            for task, i in inputs
        )
        held = [p for p in partitions if p.holds_back]
        operators, windows, more = self._operators(held, now_ms)
        return TimeView(partitions, operators, windows, tuple(_holding_line(p) for p in held), more)

    # -- partitions -----------------------------------------------------------------------------------------
    def _track(self, i: InputTime, processed: int, now_ms: float) -> None:
        seen = (processed, i.watermark)
        if self._seen.get(i.ssp) != seen:
            self._seen[i.ssp] = seen
            if processed or i.watermark >= 0:
                self._moved_ms[i.ssp] = now_ms

    @staticmethod
    def _newest_by_stream(
        inputs: list[tuple[str, InputTime]], seen: dict[SystemStreamPartition, int]
    ) -> dict[SystemStream, int]:
        newest: dict[SystemStream, int] = {}
        for _, i in inputs:
            stream = i.ssp.system_stream
            candidates = [newest.get(stream, -1), i.watermark, seen.get(i.ssp, -1)]
            newest[stream] = max(candidates)
        return {stream: ms for stream, ms in newest.items() if ms >= 0}

    @staticmethod
    def _holders(
        inputs: list[tuple[str, InputTime]], processed: dict[SystemStreamPartition, tuple[int, bool]]
    ) -> set[tuple[str, SystemStreamPartition]]:
        """The (task, partition)s of source streams whose watermark is the lowest of their stream's open
        partitions while another's is higher. (An intermediate partition trails its slowest producer,
        which its row names: the source partition behind that producer is the one to name.)"""
        by_stream: dict[SystemStream, list[tuple[str, InputTime]]] = {}
        for task, i in inputs:
            if not i.intermediate and not processed.get(i.ssp, (0, False))[1]:
                by_stream.setdefault(i.ssp.system_stream, []).append((task, i))
        holders: set[tuple[str, SystemStreamPartition]] = set()
        for members in by_stream.values():
            marks = [i.watermark for _, i in members]
            low = min(marks)
            if low < max(marks):
                holders.update((task, i.ssp) for task, i in members if i.watermark == low)
        return holders

    def _partition(
        self,
        task: str,
        i: InputTime,
        newest: int | None,
        holds_back: bool,
        processed: dict[SystemStreamPartition, tuple[int, bool]],
        now_ms: float,
    ) -> PartitionTimeView:
        moved = self._moved_ms.get(i.ssp)
        behind = None if newest is None or i.watermark < 0 else max(newest - i.watermark, 0)
        if newest is not None and i.watermark < 0:
            behind = None
        return PartitionTimeView(
            task,
            i.ssp,
            i.intermediate,
            i.watermark,
            newest,
            behind,
            None if moved is None else max(now_ms - moved, 0.0) / 1000.0,
            i.producers,
            holds_back,
            processed.get(i.ssp, (0, False))[1],
        )

    # -- operators and windows ------------------------------------------------------------------------------
    def _operators(
        self, held: list[PartitionTimeView], now_ms: float
    ) -> tuple[tuple[OperatorTimeView, ...], tuple[OpenWindowView, ...], int]:
        operators: list[OperatorTimeView] = []
        windows: list[OpenWindowView] = []
        more = 0
        for t in self._tasks.values():
            for o in t.operators:
                w = o.window
                operators.append(
                    OperatorTimeView(
                        t.task,
                        o.op_id,
                        o.kind
                        if w is None
                        else f"{w.kind} window ({'event' if w.event_time else 'processing'} time)",
                        o.input_watermark,
                        o.output_watermark,
                        None if w is None else w.late,
                        None if w is None else w.fired,
                        None if w is None else w.open_panes,
                    )
                )
                if w is None:
                    continue
                more += w.open_panes - len(w.panes)
                windows.extend(
                    OpenWindowView(
                        t.task,
                        o.op_id,
                        short(p.key),
                        p.start_ms,
                        p.end_ms,
                        f"{p.count:,} messages" if p.count is not None else short(p.value),
                        _fires(o, p.end_ms, held, now_ms),
                    )
                    for p in w.panes
                )
        windows.sort(key=lambda w: (w.end_ms, w.task, w.op_id))
        return tuple(operators), tuple(windows), more


class TimeSampler(TimeViews):
    """Event time of one container's operator tasks, in this process (see the module docstring)."""

    def __init__(self, container: SamzaContainer) -> None:
        super().__init__()
        self._container = container
        self._newest = NewestEvents(container)
        self._last: TimeView | None = None

    def view(self, status: ContainerStatus, now_ms: float) -> TimeView | None:
        """The event time of the container now (None when it runs no application's operators)."""
        processed = {p.ssp: (p.processed, p.ended) for t in status.tasks for p in t.partitions}
        try:
            tasks = operator_times(self._container)
        except StoreNotReady:  # a task's event time changed while read: the last whole view stays
            return self._last
        self._last = self.build(ContainerTime(tasks, self._newest.newest, processed), now_ms)
        return self._last

    def unsubscribe(self) -> None:
        """Stop listening to the container's bus."""
        self._newest.close()


def _fires(o: OperatorTime, end_ms: int, held: list[PartitionTimeView], now_ms: float) -> str:
    """When a pane ending at ``end_ms`` fires: an event-time window's once its input watermark reaches
    the end (naming the partitions holding that watermark back), a processing-time window's at the first
    window timer after the end."""
    assert o.window is not None
    if not o.window.event_time:
        wait_s = (end_ms - now_ms) / 1000.0
        when = f"in {wait_s:.1f} s" if wait_s > 0 else "now due"
        return f"at the first window timer after {end_ms:,} ({when})"
    watermark = o.input_watermark
    to_go = f"{end_ms - watermark:,} ms to go" if watermark >= 0 else "no watermark yet"
    holders = sorted({str(p.ssp) for p in held if p.watermark == watermark and not p.intermediate})
    waits = f"; waits on {', '.join(holders)}" if holders else ""
    return f"when the watermark reaches {end_ms:,} ({to_go}){waits}"


def _holding_line(p: PartitionTimeView) -> str:
    """``clicks#1 (task Partition 1) holds back the watermark at 2,883 ms: 2,232 ms behind the newest
    event; nothing came from it for 3.1 s``."""
    where = f"{p.ssp} (task {p.task})"
    if p.watermark < 0:
        line = f"{where} holds back the watermark: it has sent none yet"
    else:
        line = f"{where} holds back the watermark at {mark(p.watermark)} ms"
        if p.behind_ms is not None:
            line += f": {p.behind_ms:,} ms behind the newest event"
    if p.idle_s is not None:
        line += f"; nothing came from it for {p.idle_s:.1f} s"
    elif p.watermark < 0:
        line += "; nothing came from it yet"
    return line


__all__ = ["TimeSampler", "TimeViews"]
