"""The monitor of a notebook job: listens on the observe bus and samples the container into JobViews.

It costs the container next to nothing, so the notebook can watch a job at full speed:

- of the per-message events it takes only chooser decisions, *sampled* (about one per slice of work);
  the rare events (commits, end-of-stream, failures, restores) it appends to bounded buffers;
- a timer on the job's own loop samples ``container.status()`` (a cheap snapshot) ``refresh_s`` apart
  and asks the systems for head offsets (for lag) in the background at every tick where the previous
  ask finished (so lag follows every view without a tick ever waiting on a system);
- each sample becomes an immutable :class:`JobView` in ``view`` (readable from any thread) and is handed
  to ``listeners`` on the loop thread (the dashboard renders there, throttled by the same timer).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import TYPE_CHECKING

from samza_nb.chooser.settings import read_chooser_settings
from samza_nb.notebook.display.event_time.sampler import TimeSampler
from samza_nb.notebook.display.samplers import LiveSamples
from samza_nb.notebook.display.view_feed import Throughput, notify
from samza_nb.notebook.display.views import (
    CommitView,
    DecisionView,
    EndOfStreamView,
    InFlightView,
    JobView,
    PartitionView,
    TaskView,
    before_start_notes,
    offset_lag,
    position,
    reset_notes,
)
from samza_nb.observe import events as ev
from samza_nb.observe.states import ContainerState, RunOutcome

if TYPE_CHECKING:
    from samza_nb.api.streams import SystemStream, SystemStreamPartition
    from samza_nb.container.container import SamzaContainer
    from samza_nb.container.status import TaskStatus
    from samza_nb.notebook.runs.runnable import Listener

log = logging.getLogger(__name__)

RARE_EVENTS = (
    ev.ContainerStarted,
    ev.ContainerStopped,
    ev.Committed,
    ev.EndOfStreamReached,
    ev.TaskFailed,
    ev.WindowFired,
    ev.StoreRestoreProgress,
    ev.EndOfStreamProgress,
)
"""The events the monitor takes in full: a few per commit, per partition or per watermark, never per
message."""

DECISION_SPACING_MS = 50.0
"""The dashboard keeps a sampled decision when this long passed since the last one it kept, or when the
decision differs in kind (another partition, or another reason: tier, bootstrap state, batch or not)."""


def _reason_kind(trace: ev.DecisionTrace | None) -> tuple[object, ...]:
    if trace is None:
        return ()
    return (trace.tier, trace.gated_by_bootstrap, trace.lagging_streams, trace.held_by_batching)


def _same_kind(a: ev.ChooserDecision, b: ev.ChooserDecision) -> bool:
    return a.ssp == b.ssp and _reason_kind(a.trace) == _reason_kind(b.trace)


def decision_reason(trace: ev.DecisionTrace | None, *, tiers: bool = True) -> str:
    """Why the chooser chose what it did, from its trace (None: an untraced decision): bootstrapping,
    ``continues a batch: 37 of 100``, ``priority tier 5`` (only with ``tiers``: a job whose user set
    priorities), and how many messages were waiting."""
    if trace is None:
        return "chosen"
    reasons = []
    if trace.gated_by_bootstrap:
        lagging = ", ".join(str(stream) for stream in trace.lagging_streams)
        reasons.append(f"bootstrapping ({lagging or 'bootstrap streams'} not caught up)")
    if trace.held_by_batching:
        where = getattr(trace, "batch_position", None), getattr(trace, "batch_size", None)
        reasons.append(
            f"continues a batch: {where[0]} of {where[1]}" if None not in where else "continues a batch"
        )
    if trace.tier is not None and tiers:
        reasons.append(f"priority tier {trace.tier}")
    reason = "; ".join(reasons) or "round robin"
    candidates = trace.candidates
    return f"{reason} (1 of {len(candidates)} waiting)" if candidates else reason


def _phase(task: TaskStatus, outcome: RunOutcome | None, failed: bool, progressed: bool, backlog: int) -> str:
    """What the task is doing. At the end: ``failed`` only for the task that raised (``failed``), the
    others ``stopped``. While it runs, from what the loop did since the last view rather than from the
    callbacks in flight (a sync task runs between two views and has none in flight when one is taken):
    ``processing`` (it has some in flight or processed some since), ``waiting`` (messages wait for it
    but it processed none: its turn did not come, or the job is paused) or ``idle`` (nothing to do)."""
    if task.done:
        return "done"
    if outcome is not None:  # the job ended before the task was done
        return "failed" if outcome is RunOutcome.FAILED and failed else "stopped"
    if task.end_of_stream:
        return "end-of-stream"
    if task.need_commit:
        return "commit due"
    if task.need_window:
        return "window due"
    if task.in_flight or progressed:
        return "processing"
    return "waiting" if backlog else "idle"


class Monitor:
    """Watches one container; create it before the container runs (it subscribes at once).

    ``trace_all`` records every chooser decision in ``decisions`` (each one costs the container: for
    small demonstrations only); otherwise decisions are sampled for the dashboard. Head offsets are
    asked for at every tick where the previous ask finished and ``heads_every_s`` passed (0: every tick).
    """

    def __init__(
        self,
        container: SamzaContainer,
        *,
        job: str,
        mode: str,
        refresh_s: float = 0.2,
        heads_every_s: float = 0.0,
        trace_all: bool = False,
        keep_decisions: int = 12,
        keep_commits: int = 20,
    ) -> None:
        self._container = container
        self._job = job
        self._mode = mode
        self._refresh_s = refresh_s
        self._heads_every_s = heads_every_s
        self.listeners: list[Listener] = []
        self.view = JobView(job, mode, ContainerState.NEW)
        self.decisions: list[ev.ChooserDecision] = []
        self._trace_all = trace_all
        self._recent_decisions: deque[ev.ChooserDecision] = deque(maxlen=keep_decisions)
        self._last_decision: ev.ChooserDecision | None = None
        self._commits: deque[tuple[ev.Committed, int]] = deque(maxlen=keep_commits)
        self._commit_count = 0
        self._restores: dict[tuple[str, str], ev.StoreRestoreProgress] = {}
        self._end_of_stream: dict[tuple[str, SystemStreamPartition], ev.EndOfStreamProgress] = {}
        self._failure: str | None = None
        self._failed_tasks: set[str] = set()
        self._processed_before: dict[str, int] = {}
        self._started_ms: float | None = None
        self._throughput = Throughput()
        self._heads: dict[SystemStreamPartition, str | None] = {}
        self._heads_due = 0.0
        self._heads_task: asyncio.Task[None] | None = None
        self._tiers = _configured_priorities(container)
        self._timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        bus = container.bus
        self._unsubscribe = [
            bus.subscribe(self._on_event, RARE_EVENTS),
            bus.subscribe(self._on_decision, [ev.ChooserDecision], sampled=not trace_all),
        ]
        self._live = LiveSamples(container, self._since_start)  # sampled messages, store tables
        self._time = TimeSampler(container)  # watermarks, late messages, open windows

    # -- lifecycle (on the job's loop thread) ---------------------------------------------------------------
    def start(self) -> None:
        """Start sampling on the running loop (the job's)."""
        self._loop = asyncio.get_running_loop()
        self._throughput.restart()
        self._timer = self._loop.call_later(self._refresh_s, self._tick)

    async def finish(self, outcome: RunOutcome, error: str | None) -> JobView:
        """The run ended with ``outcome`` (a RunOutcome or its word): stop sampling, take the last sample
        (with fresh head offsets), stop listening."""
        if self._timer is not None:
            self._timer.cancel()
        if self._heads_task is not None and not self._heads_task.done():
            self._heads_task.cancel()
        try:
            async with asyncio.timeout(1.0):
                await self._refresh_heads()
        except Exception:  # the systems may be gone after a failure: the view shows what it had
            log.debug("head offsets after the run are not available", exc_info=True)
        await self._live.finish()
        self._time.unsubscribe()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._failure = error or self._failure
        view = self._sample(RunOutcome(outcome))
        self._publish(view)
        return view

    def _tick(self) -> None:
        self._timer = None
        view = self._sample(self._container.state)
        self._publish(view)
        now = time.monotonic()
        if now >= self._heads_due and (self._heads_task is None or self._heads_task.done()):
            self._heads_due = now + self._heads_every_s
            self._heads_task = asyncio.ensure_future(self._refresh_heads())
        if self._loop is not None and not self._loop.is_closed():
            self._timer = self._loop.call_later(self._refresh_s, self._tick)

    def _publish(self, view: JobView) -> None:
        self.view = view
        notify(self.listeners, view)

    async def _refresh_heads(self) -> None:
        if self._container.metadata:
            self._heads = await self._container.head_offsets()

    # -- events (on the job's loop thread; must be quick) -------------------------------------------------
    def _on_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.Committed):
            self._commit_count += 1
            self._add_commit(event)
        elif isinstance(event, ev.ContainerStarted):
            self._started_ms = event.at_ms
        elif isinstance(event, ev.TaskFailed):
            where = f" at {event.ssp} offset {event.offset}" if event.ssp is not None else ""
            self._failure = f"task {event.task!r} failed{where}: {event.error}"
            self._failed_tasks.add(event.task)
        elif isinstance(event, ev.StoreRestoreProgress):
            self._restores[(event.task, event.store)] = event
        elif isinstance(event, ev.EndOfStreamProgress):
            self._end_of_stream[(event.task, event.ssp)] = event

    def _add_commit(self, event: ev.Committed) -> None:
        """Keep ``event``; one identical to its task's previous checkpoint (same offsets) replaces it,
        counted (the newest first, with the latest time)."""
        commits = self._commits
        for i in range(len(commits) - 1, -1, -1):
            previous, count = commits[i]
            if previous.task == event.task:
                if previous.offsets == event.offsets:
                    del commits[i]
                    commits.append((event, count + 1))
                    return
                break
        commits.append((event, 1))

    def _on_decision(self, event: ev.Event) -> None:
        assert isinstance(event, ev.ChooserDecision)
        if self._trace_all:
            self.decisions.append(event)
        last = self._last_decision
        if last is not None and event.at_ms - last.at_ms < DECISION_SPACING_MS and _same_kind(event, last):
            return  # several samples of one burst: keep the list a history, not one instant
        self._last_decision = event
        self._recent_decisions.append(event)

    # -- sampling ---------------------------------------------------------------------------------------
    def _sample(self, state: ContainerState | RunOutcome) -> JobView:
        """A view of the container now: ``state`` its lifecycle state while it runs, the run's outcome at
        the end (the view is then ``done``)."""
        outcome = state if isinstance(state, RunOutcome) else None
        done = outcome is not None
        status = self._container.status()
        now_ms = self._container.clock.now_ms()
        elapsed, rate = self._throughput.sample(status.processed, done)
        heads = self._heads
        # An intermediate partition ends by control messages the operator task counts, not by an
        # end-of-stream envelope the container sees: its EndOfStreamProgress says so.
        ended_by_control = {(e.task, e.ssp) for e in self._end_of_stream.values() if e.ended}
        tasks = []
        for task in status.tasks:
            partitions = []
            for p in task.partitions:
                ended = p.ended or (task.name, p.ssp) in ended_by_control
                head = heads.get(p.ssp)
                at = position(p.processed_offset, p.starting_offset)
                lag = offset_lag(head, at, ended, resumed=not p.processed)
                partitions.append(
                    PartitionView(
                        p.ssp,
                        p.processed_offset,
                        p.committed_offset,
                        head,
                        lag,
                        ended,
                        p.processed,
                        p.starting_offset,
                        p.before_start,
                        tuple(r.describe() for r in p.resets),
                    )
                )
            progressed = task.processed > self._processed_before.get(task.name, 0)
            self._processed_before[task.name] = task.processed
            backlog = sum(p.lag or 0 for p in partitions)
            phase = _phase(task, outcome, task.name in self._failed_tasks, progressed, backlog)
            if phase == "idle" and partitions and all(p.ended for p in partitions):
                phase = "end-of-stream"
            oldest = task.oldest_in_flight
            tasks.append(
                TaskView(
                    task.name,
                    task.in_flight,
                    task.max_concurrency,
                    task.processed,
                    phase,
                    tuple(partitions),
                    task.peak_in_flight,
                    InFlightView(oldest.ssp, oldest.offset, max(now_ms - oldest.started_ms, 0.0))
                    if oldest is not None
                    else None,
                )
            )
        all_partitions = tuple(p for t in tasks for p in t.partitions)
        return JobView(
            job=self._job,
            mode=self._mode,
            state=state,
            processed=status.processed,
            elapsed_s=elapsed,
            rate=rate,
            tasks=tuple(tasks),
            decisions=tuple(self._decision_view(d) for d in reversed(self._recent_decisions)),
            commits=tuple(
                CommitView(self._since_start(c.at_ms), c.task, tuple(sorted(c.offsets.items())), count)
                for c, count in reversed(self._commits)
            ),
            commit_count=self._commit_count,
            restores=tuple(
                f"{task}/{store}: {r.restored:,} of ~{r.total:,} restored" + (" (done)" if r.done else "")
                for (task, store), r in sorted(self._restores.items())
            ),
            error=self._failure,
            done=done,
            notes=(*reset_notes(all_partitions), *before_start_notes(all_partitions, self._offset_key)),
            end_of_stream=tuple(
                EndOfStreamView(e.task, e.ssp, e.producers_seen, e.producers_expected, e.ended)
                for _, e in sorted(self._end_of_stream.items())
            ),
            **self._live.fields(),
            time=self._time.view(status, now_ms),
        )

    def _offset_key(self, stream: SystemStream) -> str:
        """The offset-default key in force for ``stream``: its own, else its system's."""
        own = f"systems.{stream.system}.streams.{stream.stream}.samza.offset.default"
        if self._container.config.get_str(own, ""):
            return own
        return f"systems.{stream.system}.samza.offset.default"

    def _since_start(self, at_ms: float) -> float:
        start = self._started_ms
        return (at_ms - start) / 1000.0 if start is not None else 0.0

    def _decision_view(self, event: ev.ChooserDecision) -> DecisionView:
        trace = event.trace
        return DecisionView(
            self._since_start(event.at_ms),
            event.ssp,
            event.offset,
            trace.tier if trace is not None and self._tiers else None,
            decision_reason(trace, tiers=self._tiers),
        )


def _configured_priorities(container: SamzaContainer) -> bool:
    """True when the job's config gives any input a priority (tiers are then worth naming)."""
    try:
        return bool(read_chooser_settings(container.config).priority_keys)
    except Exception:  # a bad chooser key fails the job itself, with its message
        return False


__all__ = ["RARE_EVENTS", "Monitor", "decision_reason"]
