"""The message pump: takes envelopes from the chooser and starts them on their tasks.

One mechanism, one place per rule: :meth:`MessagePump.pump` asks the consumers for the chooser's next
envelope and the room of its run; :meth:`MessagePump._take` applies the per-message rules (end-of-stream,
which a partition-end listener gets only once it is idle; park while the task is busy; skip before the
starting offset) and starts the message either as a *run*
(a sync task with concurrency 1 on the loop thread processes the envelope and the next ones of its
partition in a tight loop, :meth:`TaskInstance.process_run`) or on the general path
(:meth:`MessagePump.dispatch`: per-message events, callbacks, thread pool, concurrency above 1).
"""

from __future__ import annotations

import functools
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.api.task_factory import TaskKind
from samza_nb.chooser.base import NO_ROUND, TracedChooser
from samza_nb.container.loop.callbacks import TaskCallbackImpl
from samza_nb.container.loop.coordination import ReadableCoordinator
from samza_nb.container.loop.coroutines import settle_coroutine
from samza_nb.container.loop.rounds import run_round
from samza_nb.container.loop.starts import hand_over, host_for, start_callback, start_coroutine
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.container.loop.loop_state import LoopState
    from samza_nb.container.loop.samples import PumpSampler
    from samza_nb.container.loop.task_instance import TaskInstance


class MessagePump:
    """Chooses messages and starts them on their tasks, in slices of about ``slice_ms`` of work."""

    PUMP_BATCH = 8192
    """The most messages one :meth:`pump` starts."""

    FLUSH_EVERY = 1024
    """A pump hands the loop thread's output to the producers at least every this many messages."""

    def __init__(self, state: LoopState, sampler: PumpSampler) -> None:
        """``sampler`` samples the pump's decisions for sampled observers (it costs nothing while nobody
        samples)."""
        self._state = state
        self._sampler = sampler
        chooser = state.consumers.chooser
        self._traced: TracedChooser | None = chooser if isinstance(chooser, TracedChooser) else None
        self._batch = 64  # messages per pump; adapted to the time a pump takes (see _adapt_batch)
        self.processed = 0
        """Messages started so far."""

    def pump(self) -> int:
        """Choose and start up to a slice's worth of messages; returns how many envelopes it took from the
        chooser (end-of-stream, skipped and parked ones too)."""
        budget = self._budget()
        if budget <= 0 or self._blocked():
            return 0
        started = time.perf_counter()
        sampler = self._sampler.begin()
        count, taken, last = self._choose_and_start(budget, sampler)
        if sampler is not None:
            sampler.end(taken, last)
        if count:
            self._adapt_batch(count, budget, time.perf_counter() - started)
        return taken

    def _choose_and_start(
        self, budget: int, sampler: PumpSampler | None
    ) -> tuple[int, int, IncomingMessageEnvelope | None]:
        """Up to ``budget`` messages: returns how many were started, how many envelopes were taken, and
        the last envelope chosen (of a round: the one standing for it, see :meth:`PumpSampler.round`).
        Runs and rounds of sync tasks go in line; anything else through :meth:`_take`. ``sampler``
        (None: nobody samples this pump) hears of the decisions."""
        state = self._state
        observing = state.bus.per_message
        consumers = state.consumers
        choose_run, choose_round = consumers.choose_run, consumers.choose_round
        route = state.route
        stepwise = state.schedule.stepwise  # record/replay: a coroutine's every step is observed
        count = taken = inline = 0  # messages started, envelopes taken, messages started in line here
        envelope: IncomingMessageEnvelope | None = None
        picked: IncomingMessageEnvelope | None = None  # the last envelope chosen, or its round's pick
        # While tasks send, their output goes to the producers every FLUSH_EVERY messages: the envelopes
        # then die young, before the garbage collector walks them. A pump whose first FLUSH_EVERY
        # messages sent nothing runs on uncut (a boundary between runs costs ~2 us).
        limit = min(budget, self.FLUSH_EVERY)
        outputs = state.outputs
        while count < budget:
            if count >= limit:
                limit = budget
                if outputs is not None and outputs.pending:
                    state.flush_outputs()
                    if state.failure is not None:
                        break
                    limit = min(budget, count + self.FLUSH_EVERY)
            envelope, room = choose_run()
            if envelope is None:
                break
            picked = envelope
            ti = route[envelope.ssp]
            inline_run = (
                ti.runs_inline
                and not ti.check_start
                and envelope.offset != END_OF_STREAM_OFFSET
                and (not stepwise or not ti.coroutine)  # a recorded coroutine: one message at a time
            )
            if sampler is not None and (observing or not inline_run or (room and count + 1 < limit)):
                sampler.chose(envelope)  # (a round is sampled below, fairly over its partitions)
            if observing:
                self._publish_decision(envelope)
                n = self._take(ti, envelope, room, limit - count - 1, observing)
                taken += n or 1
                if ti.in_flight >= ti.max_concurrency and self._blocked():
                    count += n
                    break
            elif inline_run:
                # The common case, decided in one test: a run of a sync task, or a round of them.
                if not (room and count + 1 < limit):
                    rest, rows = choose_round() if not ti.coroutine else NO_ROUND
                    if rest:
                        if sampler is not None:
                            picked = sampler.round(envelope, rest)
                        # The round accounts for itself (task counts, requests, failure).
                        n = run_round(state, envelope, rest, limit - count, rows)
                        taken += n or 1
                        inline += n
                        count += n
                        if state.failure is not None or state.requests.shutdown_now:
                            break
                        continue
                    if sampler is not None:
                        sampler.chose(envelope)
                n, processed = self._run(ti, envelope, room, limit - count - 1)
                taken += n
                inline += processed
                n = processed
            else:
                n = self._take(ti, envelope, room, limit - count - 1, observing)
                taken += n or 1
                if ti.in_flight >= ti.max_concurrency and self._blocked():
                    count += n
                    break
            count += n
            if state.failure is not None or state.requests.shutdown_now:
                break
        self.processed += inline
        return count, taken, picked

    def start_parked(self, ti: TaskInstance) -> bool:
        """Start the task's parked envelopes while it is open; True when any was started or skipped."""
        state = self._state
        progressed = False
        observing = state.bus.per_message
        while ti.pending and ti.open and state.failure is None and not state.requests.shutdown_now:
            if ti.pending[0].offset == END_OF_STREAM_OFFSET:  # parked by a partition-end listener
                if ti.in_flight:
                    break  # its completions wake the loop, which comes back here
                self._partition_end(ti, ti.unpark().ssp)
            else:
                self._start(ti, ti.unpark(), 0, 0, observing)
            progressed = True
        return progressed

    def step_one(self, ti: TaskInstance, envelope: IncomingMessageEnvelope | None) -> int:
        """Stepping (container/steering/): handle ``envelope``, just chosen, by the rules of :meth:`_take` on
        the general path, or with None the task's oldest parked envelope; returns how many messages
        started."""
        if envelope is not None:
            return self._take(ti, envelope, 0, 0, True)
        envelope = ti.unpark()
        if envelope.offset == END_OF_STREAM_OFFSET:
            self._partition_end(ti, envelope.ssp)
            return 0
        return self._start(ti, envelope, 0, 0, True)

    def _blocked(self) -> bool:
        """Samza's ``blockIfBusy``: no choosing while every task that is not done has as many messages in
        flight as it may (a thread pool's calls, async ones). An envelope chosen for such a task would
        wait parked with its partition not refilled, and choosing on would hand out the other partitions'
        envelopes first (a priority stream's next message would lose to a lower one). Blocked, the loop
        waits for a completion, which frees the task (and starts what it has parked: :meth:`start_parked`).
        A task busy with a commit or window only is not counted: every loop mode parks for those alike."""
        return not any(ti.in_flight < ti.max_concurrency and not ti.done for ti in self._state.tasks)

    # -- the per-message rules ---------------------------------------------------------------------------
    def _take(
        self, ti: TaskInstance, envelope: IncomingMessageEnvelope, room: int, limit: int, observing: bool
    ) -> int:
        """Handle an envelope just chosen (with the room of its run, at most ``limit`` more); returns how
        many messages it started."""
        if envelope.offset == END_OF_STREAM_OFFSET:
            if ti.partition_end_listener and (ti.pending or ti.in_flight or not ti.open):
                ti.park(envelope)  # on_partition_end waits, like a message, until the task is idle
                return 0
            self._partition_end(ti, envelope.ssp)
            return 0
        if ti.pending or not ti.open:
            ti.park(envelope)  # its partition is not refilled until it runs
            return 0
        return self._start(ti, envelope, room, limit, observing)

    def _start(
        self, ti: TaskInstance, envelope: IncomingMessageEnvelope, room: int, limit: int, observing: bool
    ) -> int:
        """Start a message its task is open for, unless it is older than its starting offset."""
        if ti.skips(envelope):
            self._state.consumers.refill(envelope.ssp)
            return 0
        if ti.runs_inline and not observing and not (ti.coroutine and self._state.schedule.stepwise):
            processed = self._run(ti, envelope, room, limit)[1]
        elif ti.inline:  # a sync task on the loop thread, observed or not on the run path: a run of one
            processed = self._run(ti, envelope, 0, 0)[1]
        else:
            self.dispatch(ti, envelope)
            return 1
        self.processed += processed
        return processed

    def _run(
        self, ti: TaskInstance, envelope: IncomingMessageEnvelope, room: int, limit: int
    ) -> tuple[int, int]:
        """The inline run: process ``envelope`` and up to ``min(room, limit)`` more of its partition in a
        tight loop (:meth:`TaskInstance.process_run`), then account for it (a coroutine it ended on goes on
        as a Task; a failure, the requests of its last call). A run of one is observed message by message
        when per-message observers listen. Returns how many envelopes it took and how many messages it
        processed or started."""
        state = self._state
        consumers = state.consumers
        observed = state.bus.per_message
        if observed:
            self._publish_started(ti, envelope, 1)
        if ti.kind is TaskKind.COROUTINE:
            host_for(state, ti)  # the current task of its in-line segments (loop/hosts.py)
        if room and limit > 0:
            failed = ti.process_run(envelope, consumers.take_run(envelope.ssp, min(room, limit)))
            n = 1 + consumers.end_run()
        else:
            consumers.refill(envelope.ssp)
            failed, n = ti.process_run(envelope, ()), 1
        state.schedule.ran(ti, envelope, failed, n)
        if observed and failed is None:
            state.bus.publish(
                ev.ProcessCompleted(state.clock.now_ms(), ti.name, envelope.ssp, envelope.offset, 0)
            )
        started = self._hand_over(ti) if ti.suspended is not None else 0
        if failed is None and not ti.coordinator.requested:
            ti.record_run(envelope.ssp, n - started)
            return n, n
        return n, self._after_run(ti, envelope, failed, n, started)

    def _hand_over(self, ti: TaskInstance) -> int:
        """The coroutine a run of ``ti`` ended on, suspended, goes on as a Task (in flight); returns 1."""
        suspended = ti.suspended
        assert suspended is not None
        ti.suspended = None
        hand_over(self._state, ti, suspended)
        return 1

    def _after_run(
        self,
        ti: TaskInstance,
        envelope: IncomingMessageEnvelope,
        failed: tuple[IncomingMessageEnvelope, Exception] | None,
        n: int,
        started: int = 0,
    ) -> int:
        """Account for a run of ``n`` envelopes (the last ``started`` of them still in flight): a failure,
        the requests of its last call; returns how many messages were processed or started."""
        state = self._state
        if failed is not None:
            n -= 1
            state.fail(ti, envelope.ssp, failed[0].offset, failed[1], "process")
        ti.record_run(envelope.ssp, n - started)
        coordinator = ti.coordinator
        if coordinator.requested:
            state.take_requests(coordinator)
        return n

    def dispatch(self, ti: TaskInstance, envelope: IncomingMessageEnvelope) -> None:
        """Start one message on the general path (an async callback, a coroutine, the thread pool), with
        per-message events when observed; its partition's next envelope goes to the chooser. (A sync task
        on the loop thread takes the inline run, :meth:`_run`.)"""
        state = self._state
        ssp = envelope.ssp
        state.consumers.refill(ssp)
        self.processed += 1
        bus = state.bus
        schedule = state.schedule
        if ti.kind is TaskKind.COROUTINE and not schedule.stepwise and not bus.per_message:
            start_coroutine(state, ti, envelope)  # in line until it suspends (loop/coroutines.py)
            if state.completions:
                state.drain_completions()
            return
        coordinator = ReadableCoordinator(ti.name)
        callback = start_callback(state, ti, envelope, coordinator)
        schedule.dispatched(ti, ssp, envelope.offset, callback)
        if bus.per_message:
            self._publish_started(ti, envelope, ti.in_flight)
        try:
            if ti.kind is TaskKind.CALLBACK:
                ti.task.process_async(envelope, ti.collector, coordinator, callback)
            elif ti.kind is TaskKind.COROUTINE:
                loop = state.loop
                assert loop is not None
                coroutine = schedule.coroutine(ti, ti.process(envelope, ti.collector, coordinator))
                loop.create_task(settle_coroutine(coroutine, callback))
            else:
                assert state.executor is not None
                future = state.executor.submit(ti.process, envelope, ti.collector, coordinator)
                future.add_done_callback(functools.partial(_settle_from_future, callback))
        except Exception as exc:
            callback.failure(exc)
        if state.completions:
            state.drain_completions()

    def _partition_end(self, ti: TaskInstance, ssp: SystemStreamPartition) -> None:
        """``ssp``'s end-of-stream was taken: a partition-end listener is told first (nothing of it is in
        flight then; its requests apply, an error fails the container), then the partition counts as
        ended."""
        state = self._state
        state.consumers.refill(ssp)
        if ti.partition_end_listener:
            coordinator = ReadableCoordinator(ti.name)
            try:
                ti.task.on_partition_end(ssp, ti.collector, coordinator)
            except Exception as exc:
                state.fail(ti, ssp, END_OF_STREAM_OFFSET, exc, "end-of-stream (on_partition_end)")
                return
            if coordinator.requested:
                state.apply_requests(coordinator)
        ti.partition_ended(ssp)
        if state.bus.active:
            state.bus.publish(ev.EndOfStreamReached(state.clock.now_ms(), ti.name, ssp, False))

    # -- slices -----------------------------------------------------------------------------------------
    def _budget(self) -> int:
        state = self._state
        budget = self._batch
        if state.settings.max_messages is not None:
            budget = min(budget, state.settings.max_messages - self.processed)
            if budget <= 0:
                state.stop()
        return budget

    def _adapt_batch(self, count: int, budget: int, elapsed_s: float) -> None:
        """Size the next pump so it takes about one slice: slow tasks get small batches (timers, stops
        and the notebook are never kept waiting long), fast ones up to PUMP_BATCH."""
        slice_s = self._state.settings.slice_ms / 1000.0
        if elapsed_s > slice_s:
            self._batch = max(1, int(count * slice_s / elapsed_s))
        elif count >= budget and elapsed_s < slice_s / 4:
            self._batch = min(self.PUMP_BATCH, budget * 2)

    # -- per-message events on the bus (per-message observers) ------------------------------------------
    def _publish_started(self, ti: TaskInstance, envelope: IncomingMessageEnvelope, in_flight: int) -> None:
        state = self._state
        state.bus.publish(
            ev.ProcessStarted(state.clock.now_ms(), ti.name, envelope.ssp, envelope.offset, in_flight)
        )

    def _publish_decision(self, envelope: IncomingMessageEnvelope) -> None:
        state = self._state
        trace = self._traced.last_choice if self._traced is not None else None
        state.bus.publish(ev.ChooserDecision(state.clock.now_ms(), envelope.ssp, envelope.offset, trace))


def _settle_from_future(callback: TaskCallbackImpl, future: Future[Any]) -> None:
    error = future.exception()
    if error is not None:
        callback.failure(error)
    else:
        callback.complete()
