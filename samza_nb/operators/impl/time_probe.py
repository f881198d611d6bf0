"""A container's event time as JSON: what a container process's query service answers to ``GET /time``
(:mod:`samza_nb.container.queries.server`, given a :class:`TimeProbe` by the process), so the job
coordinator can gather the event time of a job of several containers as it gathers its stores.

:class:`TimeProbe` reads, on the container's loop thread (where its tasks run), each operator task's
:class:`~samza_nb.operators.impl.time_view.TaskTime`, each input partition's processed count (and whether
it ended), and the newest event time seen on each partition (the observe bus's sampled
:class:`~samza_nb.observe.events.MessageTaken`, about one per slice of work; listened to from the first
request on, so a container nobody asks pays nothing). :func:`time_of_json` reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.container.queries.reader import StoreNotReady, plain
from samza_nb.errors import SamzaError
from samza_nb.observe import events as ev
from samza_nb.operators.impl.time_view import InputTime, OperatorTime, PaneTime, TaskTime, WindowTime
from samza_nb.operators.task import StreamOperatorTask

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from samza_nb.container.container import SamzaContainer


@dataclass
class ContainerTime:
    """The event time of one container: its operator tasks' snapshots (task name -> TaskTime), the newest
    event time seen per input partition, and each input partition's processed count and whether it
    ended."""

    tasks: dict[str, TaskTime] = field(default_factory=dict)
    newest: dict[SystemStreamPartition, int] = field(default_factory=dict)
    processed: dict[SystemStreamPartition, tuple[int, bool]] = field(default_factory=dict)

    @classmethod
    def union(cls, times: Iterable[ContainerTime]) -> ContainerTime:
        """The event time of a job of several containers (each task and partition is in one of them)."""
        job = cls()
        for time in times:
            job.tasks.update(time.tasks)
            job.newest.update(time.newest)
            job.processed.update(time.processed)
        return job


class NewestEvents:
    """The newest event time seen per input partition, from the sampled messages of ``container``'s bus
    (listening until :meth:`close`)."""

    def __init__(self, container: SamzaContainer) -> None:
        self.newest: dict[SystemStreamPartition, int] = {}
        self._unsubscribe: Callable[[], None] | None = container.bus.subscribe(
            self._on_message, [ev.MessageTaken]
        )

    def _on_message(self, event: ev.Event) -> None:
        if isinstance(event, ev.MessageTaken) and event.timestamp is not None:
            newest = self.newest.get(event.ssp)
            if newest is None or event.timestamp > newest:
                self.newest[event.ssp] = event.timestamp

    def close(self) -> None:
        """Stop listening (idempotent)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


SNAPSHOT_ATTEMPTS = 3
"""Reads of a task's event time before a request is refused (a thread-pool task may change it meanwhile)."""


def operator_times(container: SamzaContainer) -> dict[str, TaskTime]:
    """Each operator task's event time now (call on the container's loop thread; a task with none yet is
    left out). A task whose snapshot cannot be read now (a task on a thread pool changed it meanwhile, three
    times in a row) is a :class:`StoreNotReady` naming it (503: ask again), never an answer without it."""
    times = {}
    for ti in container.tasks.values():
        task = ti.task
        if isinstance(task, StreamOperatorTask):
            for _attempt in range(SNAPSHOT_ATTEMPTS):
                try:
                    snapshot = task.event_time()
                    break
                except RuntimeError:  # a task on a thread pool changed a dict meanwhile
                    continue
            else:
                raise StoreNotReady(
                    f"the event time of task {ti.name!r} changed while it was read: ask again"
                )
            if snapshot is not None:
                times[ti.name] = snapshot
    return times


class TimeProbe:
    """``GET /time`` of a container's query service (a :class:`~samza_nb.container.queries.server.
    TimeSource`): :meth:`json` on its loop thread."""

    def __init__(self, container: SamzaContainer) -> None:
        self._container = container
        self._newest: NewestEvents | None = None

    def json(self) -> dict[str, Any]:
        """The container's event time now, JSON-ready (see :func:`time_of_json`)."""
        container = self._container
        if self._newest is None:
            self._newest = NewestEvents(container)
        status = container.status()
        return {
            "tasks": [_task(t) for t in operator_times(container).values()],
            "newest": [[*_ssp(ssp), ms] for ssp, ms in self._newest.newest.items()],
            "processed": [[*_ssp(p.ssp), p.processed, p.ended] for t in status.tasks for p in t.partitions],
        }

    def close(self) -> None:
        """Stop listening to the container's bus."""
        if self._newest is not None:
            self._newest.close()


def time_of_json(data: Any) -> ContainerTime:
    """The :class:`ContainerTime` that :meth:`TimeProbe.json` made (pane keys and values as JSON carries
    them: text, numbers, lists); a SamzaError for anything else."""
    try:
        tasks = [_task_of(t) for t in data["tasks"]]
        return ContainerTime(
            {t.task: t for t in tasks},
            {_ssp_of(n[:3]): int(n[3]) for n in data["newest"]},
            {_ssp_of(p[:3]): (int(p[3]), bool(p[4])) for p in data["processed"]},
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise SamzaError(f"not a container's event time: {str(data)[:120]}") from exc


def _ssp(ssp: SystemStreamPartition) -> list[Any]:
    return [ssp.system, ssp.stream, ssp.partition]


def _ssp_of(data: list[Any]) -> SystemStreamPartition:
    return SystemStreamPartition(str(data[0]), str(data[1]), int(data[2]))


def _task(t: TaskTime) -> dict[str, Any]:
    return {
        "task": t.task,
        "inputs": [
            [*_ssp(i.ssp), i.intermediate, i.watermark, [list(p) for p in i.producers], i.producers_expected]
            for i in t.inputs
        ],
        "operators": [
            [
                o.op_id,
                o.kind,
                o.input_watermark,
                o.output_watermark,
                None if o.window is None else _window(o.window),
            ]
            for o in t.operators
        ],
    }


def _window(w: WindowTime) -> list[Any]:
    panes = [[plain(p.key), p.start_ms, p.end_ms, plain(p.value), p.count] for p in w.panes]
    return [w.event_time, w.kind, w.size_ms, w.late, w.fired, w.open_panes, panes]


def _task_of(data: dict[str, Any]) -> TaskTime:
    inputs = tuple(
        InputTime(_ssp_of(i[:3]), bool(i[3]), int(i[4]), tuple((str(t), int(m)) for t, m in i[5]), int(i[6]))
        for i in data["inputs"]
    )
    operators = tuple(
        OperatorTime(str(o[0]), str(o[1]), int(o[2]), int(o[3]), None if o[4] is None else _window_of(o[4]))
        for o in data["operators"]
    )
    return TaskTime(str(data["task"]), inputs, operators)


def _window_of(w: list[Any]) -> WindowTime:
    panes = tuple(
        PaneTime(p[0], int(p[1]), int(p[2]), p[3], None if p[4] is None else int(p[4])) for p in w[6]
    )
    return WindowTime(bool(w[0]), str(w[1]), int(w[2]), int(w[3]), int(w[4]), int(w[5]), panes)


__all__ = ["ContainerTime", "NewestEvents", "TimeProbe", "operator_times", "time_of_json"]
