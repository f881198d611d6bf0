"""The monitor of a notebook job of several container processes: polls the job coordinator's status.

The containers report their host, state, processed count and tasks to the job coordinator (in the
kernel) every ``cluster-manager.container.status.interval.ms``; a timer on the job's loop reads the
coordinator's status (the same data ``GET /status`` serves) every ``refresh_s`` and makes a JobView with
one :class:`ContainerView` per container and every container's tasks, handed to ``listeners`` (the
dashboard) as the single-container monitor does. While the job starts (seconds: a Spark session, Python
starting in each process), a note says what it waits for (:meth:`ContainersJob.starting_phase`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.coordinator.status import UNREPORTED
from samza_nb.notebook.display.view_feed import Throughput, notify
from samza_nb.notebook.display.views import ContainerView, JobView, PartitionView, TaskView, reset_notes
from samza_nb.observe.states import ContainerState, RunOutcome

if TYPE_CHECKING:
    from samza_nb.api.job_model import JobModel
    from samza_nb.api.streams import SystemStreamPartition
    from samza_nb.coordinator.status import ContainerReport, JobStatus
    from samza_nb.notebook.runs.runnable import Listener
    from samza_nb.observe.events import ChooserDecision


class ContainersJob(Protocol):
    """A job whose containers report to a job coordinator: a ProcessesJob, a SparkNotebookJob."""

    @property
    def config(self) -> Any:
        """The job's config."""
        ...

    @property
    def job_model(self) -> JobModel | None:
        """The coordinator's job model once it started."""
        ...

    def status(self) -> JobStatus | None:
        """Every container's last report (None before the coordinator started)."""
        ...

    def starting_phase(self) -> str:
        """What the job waits for while it starts (``the job coordinator``, ``2 of 3 containers``...)."""
        ...


class ContainersMonitor:
    """Makes the JobViews of a job of several containers (a ProcessesJob, a SparkNotebookJob: a RunMonitor,
    see :mod:`..runs.job`); chooser decisions stay in the container processes, so ``decisions`` is empty."""

    def __init__(self, job: ContainersJob, *, name: str, mode: str, refresh_s: float = 0.2) -> None:
        self._job = job
        self._name = name
        self._mode = mode
        self._refresh_s = refresh_s
        self._max_concurrency = job.config.get_int("task.max.concurrency", 1)
        self._throughput = Throughput()
        self._processed_before: dict[str, int] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.listeners: list[Listener] = []
        self.view = JobView(name, mode, ContainerState.NEW)

    @property
    def decisions(self) -> Sequence[ChooserDecision]:
        """None: the decisions are made in the container processes."""
        return ()

    def start(self) -> None:
        """Start polling on the running loop (the job's)."""
        self._loop = asyncio.get_running_loop()
        self._throughput.restart()
        self._timer = self._loop.call_later(self._refresh_s, self._tick)

    async def finish(self, outcome: RunOutcome, error: str | None) -> JobView:
        """The run ended with ``outcome`` (a RunOutcome or its word): stop polling, take the last view."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        view = self._sample(RunOutcome(outcome), error, done=True)
        self._publish(view)
        return view

    def _tick(self) -> None:
        self._timer = None
        self._publish(self._sample(None, None, done=False))
        if self._loop is not None and not self._loop.is_closed():
            self._timer = self._loop.call_later(self._refresh_s, self._tick)

    def _publish(self, view: JobView) -> None:
        self.view = view
        notify(self.listeners, view)

    def _sample(self, outcome: RunOutcome | None, error: str | None, *, done: bool) -> JobView:
        model, status = self._job.job_model, self._job.status()
        processed = status.processed if status is not None else 0
        elapsed, rate = self._throughput.sample(processed, done)
        containers: list[ContainerView] = []
        tasks: list[TaskView] = []
        if model is not None and status is not None:
            for cid in sorted(model.containers, key=lambda c: (len(c), c)):
                report = status.reports.get(cid)
                containers.append(_container_view(cid, model, report))
                tasks.extend(self._task_views(cid, model, report))
        state = outcome or _job_state(model, status)
        starting = not done and state is ContainerState.STARTING
        return JobView(
            job=self._name,
            mode=self._mode,
            state=state,
            processed=processed,
            elapsed_s=elapsed,
            rate=rate,
            tasks=tuple(tasks),
            error=error,
            done=done,
            containers=tuple(containers),
            notes=((f"starting: {self._job.starting_phase()}",) if starting else ())
            + reset_notes(tuple(p for t in tasks for p in t.partitions)),
        )

    def _task_views(self, cid: str, model: JobModel, report: ContainerReport | None) -> list[TaskView]:
        names = sorted(model.containers[cid].tasks)
        reported = {str(task["name"]): task for task in report.tasks} if report is not None else {}
        views = []
        for name in names:
            ssps = {str(ssp): ssp for ssp in model.containers[cid].tasks[name].ssps}
            task = reported.get(name)
            if task is None:
                partitions = _partitions([], ssps)
                views.append(TaskView(name, 0, self._max_concurrency, 0, "starting", partitions))
                continue
            processed = _int(task.get("processed"))
            progressed = processed > self._processed_before.get(name, 0)
            self._processed_before[name] = processed
            views.append(
                TaskView(
                    name,
                    _int(task.get("in-flight")),
                    self._max_concurrency,
                    processed,
                    _phase(task, report.state if report is not None else None, progressed),
                    _partitions(task.get("partitions"), ssps),
                    _int(task.get("peak-in-flight")),
                )
            )
        return views


def _container_view(cid: str, model: JobModel, report: ContainerReport | None) -> ContainerView:
    tasks = tuple(sorted(model.containers[cid].tasks))
    if report is None:
        return ContainerView(cid, UNREPORTED, None, None, 0, tasks)
    return ContainerView(cid, report.state, report.host, report.pid, report.processed, tasks, report.error)


def _job_state(model: JobModel | None, status: JobStatus | None) -> ContainerState:
    """The job's state from its containers': RUNNING while any runs, STOPPING once every one that
    reported is stopping or over, else STARTING."""
    if model is None or status is None:
        return ContainerState.STARTING
    states = {report.state for report in status.reports.values()}
    if ContainerState.RUNNING in states:
        return ContainerState.RUNNING
    if states and all(state is ContainerState.STOPPING or state.final for state in states):
        return ContainerState.STOPPING
    return ContainerState.STARTING


def containers_starting(status: JobStatus, count: int, what: str) -> str:
    """The starting phase of a job of ``count`` containers run as ``what`` (``container processes``,
    ``Spark tasks``) once its coordinator runs: which containers it still waits for."""
    running = sum(1 for report in status.reports.values() if report.state is not ContainerState.STARTING)
    if not status.reports:
        return (
            f"{count} containers as {what} (each starts Python, imports samza_nb and the task, and asks the "
            "job coordinator for the job model)"
        )
    return f"{running} of {count} containers running; the others start (their stores, their inputs)"


def _phase(task: Mapping[str, Any], container_state: ContainerState | None, progressed: bool) -> str:
    """What the task does: at the end its container's outcome; while it runs ``processing`` when it has
    messages in flight or processed some since the last view (a sync task has none in flight between two
    messages), else ``idle``."""
    if task.get("done"):
        return "done"
    if task.get("end-of-stream"):
        return "end-of-stream"
    if container_state is ContainerState.STOPPING or (container_state is not None and container_state.final):
        return container_state
    return "processing" if _int(task.get("in-flight")) or progressed else "idle"


def _partitions(raw: Any, ssps: Mapping[str, SystemStreamPartition]) -> tuple[PartitionView, ...]:
    reported = {str(p.get("ssp")): p for p in raw if isinstance(p, dict)} if isinstance(raw, list) else {}
    views = []
    for name in _sorted(ssps):
        p = reported.get(name, {})
        processed, committed = _offset(p.get("processed-offset")), _offset(p.get("committed-offset"))
        ended = bool(p.get("ended"))
        views.append(
            PartitionView(
                ssps[name],
                processed,
                committed,
                None,
                0 if ended else None,
                ended,
                _int(p.get("processed")),
                _offset(p.get("starting-offset")),
                resets=_reset_lines(p.get("resets")),
            )
        )
    return tuple(views)


def _reset_lines(raw: Any) -> tuple[str, ...]:
    """The lines of a partition's reported offset resets (``{"from", "to", "line"}`` each)."""
    if not isinstance(raw, list):
        return ()
    return tuple(str(r["line"]) for r in raw if isinstance(r, dict) and isinstance(r.get("line"), str))


def _sorted(ssps: Mapping[str, SystemStreamPartition]) -> list[str]:
    return sorted(ssps, key=lambda name: ssps[name])


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _offset(value: Any) -> str | None:
    return value if isinstance(value, str) else None


__all__ = ["ContainersJob", "ContainersMonitor"]
