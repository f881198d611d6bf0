"""The message pump: the per-message hot path of the run loop (choose, refill, process, release)."""

from __future__ import annotations

import asyncio
import functools
import heapq
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from samza_nb.api.streams import END_OF_STREAM_OFFSET
from samza_nb.chooser.trace import describe_choice
from samza_nb.container.callbacks import TaskCallbackImpl
from samza_nb.container.coordination import ReadableCoordinator
from samza_nb.container.loop_state import LoopState
from samza_nb.container.task_instance import TaskKind
from samza_nb.observe import events as ev

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.container.task_instance import TaskInstance


class MessagePump(LoopState):
    """Chooses messages and starts them on their tasks, sync ones inline in a tight inner loop."""

    # -- messages ---------------------------------------------------------------------------------------
    def _pump(self) -> int:
        """Choose and dispatch up to PUMP_BATCH messages (the per-message hot path); returns how many
        envelopes it took from the chooser.

        Messages of sync tasks on the loop thread run in an inner loop that pays per message only for
        choosing, refilling, the call and the offset; anything else (end-of-stream, a parked or skipped
        message, another kind of task, a coordinator request) goes through the general path.
        """
        consumers = self._consumers
        chooser = consumers.chooser
        # Optional chooser fast path: a C-level callable that raises IndexError when empty.
        take = getattr(chooser, "take", None)
        # Optional batching fast path: a run of one partition's envelopes taken straight from its buffer.
        choose_run = getattr(chooser, "choose_run", None)
        end_run = getattr(chooser, "end_run", None)
        choose = chooser.choose
        update = consumers.chooser.update
        buffers = consumers.buffers
        route = self._route
        observing = self._bus.per_message
        budget = self._batch
        started = time.perf_counter()
        if self._settings.max_messages is not None:
            budget = min(budget, self._settings.max_messages - self.processed)
            if budget <= 0:
                self._stop_requested = True
                return 0
        # A sampled observer gets one decision per pump (a few ms of work apart): the first one and the
        # last one of a pump, in turn, so that it sees more than the partition each pump starts with.
        sample = not observing and self._bus.sampled
        sample_last = False
        if sample:
            sample_last = self._sample_last
            sample = not sample_last
        fast = {} if observing else self._fast_entries()
        fast_get = fast.get
        count = 0  # messages started (budget)
        inline = 0  # of which on the inline fast path (_dispatch counts its own)
        taken = 0  # envelopes taken from the chooser (end-of-stream, skipped and parked ones too)
        held: IncomingMessageEnvelope | None = None
        while count < budget:
            if held is None:
                envelope = choose()
                if envelope is None:
                    break
                taken += 1
            else:
                envelope, held = held, None
            if sample:
                sample = False
                self._sample_last = True
                self._bus.publish(
                    ev.ChooserDecision(
                        self._clock.now_ms(),
                        envelope.ssp,
                        envelope.offset,
                        describe_choice(chooser, envelope),
                    )
                )
            ssp = envelope.ssp
            entry = fast_get(ssp)
            if entry is not None and envelope.offset != END_OF_STREAM_OFFSET:
                # -- inner loop: sync tasks on the loop thread, completion = the call returning --
                n = 0
                room = budget - count
                current = entry
                ti, process, collector, coordinator, last_offsets = entry
                since = 0  # messages of ``ti`` not yet added to ti.processed
                run_left = 0  # envelopes of ``ssp`` the batching layer lets us take from its buffer
                run_taken = 0
                run_ssp = None  # while set, this partition's refill is owed (deferred by the run)
                while True:
                    if entry is not current:
                        ti.processed += n - since
                        since = n
                        current = entry
                        ti, process, collector, coordinator, last_offsets = entry
                    if run_ssp is None:
                        buffer = buffers[ssp]
                        if buffer:
                            update(buffer.popleft())
                        else:
                            consumers.refill(ssp)
                    try:
                        process(envelope, collector, coordinator)
                    except Exception as exc:
                        self._fail(ti, ssp, envelope.offset, exc, "process")
                        break
                    last_offsets[ssp] = envelope.offset
                    n += 1
                    if coordinator.requested:
                        self._apply_requests(coordinator)
                        coordinator.reset()
                        fast = self._fast_entries()
                        fast_get = fast.get
                        break
                    if n >= room:
                        break
                    if run_ssp is not None:
                        buffer = buffers[ssp]
                        if run_left and buffer and buffer[0].offset != END_OF_STREAM_OFFSET:
                            envelope = buffer.popleft()
                            run_left -= 1
                            run_taken += 1
                            continue
                        end_run(run_taken)  # type: ignore[misc]
                        run_ssp = None
                        consumers.refill(ssp)
                    if take is not None:
                        try:
                            envelope = take()
                        except IndexError:
                            break
                    elif choose_run is not None:
                        envelope, run_left = choose_run()
                        if envelope is None:
                            break
                        if run_left:
                            run_ssp, run_taken = envelope.ssp, 0
                    else:
                        envelope = choose()
                        if envelope is None:
                            break
                    ssp = envelope.ssp
                    entry = fast_get(ssp)
                    if entry is None or envelope.offset == END_OF_STREAM_OFFSET:
                        held = envelope
                        run_ssp = None  # the general path refills it as usual
                        break
                if run_ssp is not None:
                    end_run(run_taken)  # type: ignore[misc]
                    consumers.refill(run_ssp)
                ti.processed += n - since
                taken += n - 1 + (held is not None)
                count += n
                inline += n
                if self.failure is not None or self.requests.shutdown_now:
                    break
                continue
            # -- general path --
            ti = route[ssp]
            if observing:
                trace = getattr(chooser, "last_choice", None)
                self._bus.publish(ev.ChooserDecision(self._clock.now_ms(), ssp, envelope.offset, trace))
            if envelope.offset == END_OF_STREAM_OFFSET:
                self._on_partition_end(ti, ssp)
                fast.pop(ssp, None)
                continue
            if ti.pending or not ti.open:
                ti.pending.append(envelope)  # parked: its partition is not refilled until it runs
                continue
            if ssp in ti.check_start and ti.is_before_start(envelope):
                consumers.refill(ssp)
                continue
            self._dispatch(ti, envelope)
            count += 1
            if self.failure is not None or self.requests.shutdown_now:
                break
            if self._fast_stale and not observing:
                # A request released by that dispatch may have closed another task.
                fast = self._fast_entries()
                fast_get = fast.get
            if not observing and ti.inline and ssp not in ti.check_start and ti.open and not ti.pending:
                fast[ssp] = (ti, ti.process, ti.collector, ti.coordinator, ti.last_offsets)
        if held is not None:
            # Taken but not run (budget, failure or stop): it waits, parked, for its task.
            route[held.ssp].pending.appendleft(held)
        self.processed += inline
        if sample_last:
            self._sample_last = False  # the next pump samples its first decision again
        if sample_last and taken and envelope is not None:
            self._bus.publish(
                ev.ChooserDecision(
                    self._clock.now_ms(), envelope.ssp, envelope.offset, describe_choice(chooser, envelope)
                )
            )
        if count:
            self._adapt_batch(count, budget, time.perf_counter() - started)
        return taken

    def _adapt_batch(self, count: int, budget: int, elapsed_s: float) -> None:
        """Size the next pump so it takes about one slice: slow tasks get small batches (timers, stops
        and the notebook are never kept waiting long), fast ones up to PUMP_BATCH."""
        slice_s = self._settings.slice_ms / 1000.0
        if elapsed_s > slice_s:
            self._batch = max(1, int(count * slice_s / elapsed_s))
        elif count >= budget and elapsed_s < slice_s / 4:
            self._batch = min(self.PUMP_BATCH, budget * 2)

    def _fast_entries(self) -> dict[SystemStreamPartition, tuple[Any, ...]]:
        """Partitions whose next message may take the inline fast path right now."""
        self._fast_stale = False
        return {
            ssp: (ti, ti.process, ti.collector, ti.coordinator, ti.last_offsets)
            for ti in self.tasks
            if ti.inline and ti.open and not ti.pending
            for ssp in ti.ssps
            if ssp not in ti.check_start
        }

    def _dispatch(self, ti: TaskInstance, envelope: IncomingMessageEnvelope) -> None:
        """Start one message on its task (any kind); its partition's next envelope goes to the chooser."""
        ssp = envelope.ssp
        self._consumers.refill(ssp)
        self.processed += 1
        if ti.inline:
            coordinator = ti.coordinator
            if self._bus.per_message:
                self._bus.publish(ev.ProcessStarted(self._clock.now_ms(), ti.name, ssp, envelope.offset, 1))
            try:
                ti.process(envelope, ti.collector, coordinator)
            except Exception as exc:
                self._fail(ti, ssp, envelope.offset, exc, "process")
                return
            ti.last_offsets[ssp] = envelope.offset
            ti.processed += 1
            if self._bus.per_message:
                self._bus.publish(ev.ProcessCompleted(self._clock.now_ms(), ti.name, ssp, envelope.offset, 0))
            if coordinator.requested:
                self._apply_requests(coordinator)
                coordinator.reset()
            return
        coordinator = ReadableCoordinator(ti.name)
        callback = TaskCallbackImpl(
            self, self._callback_lock, ti.name, ssp, envelope.offset, ti.callbacks.take_seq(), coordinator
        )
        ti.in_flight += 1
        ti.processed += 1
        self._refresh(ti)
        if self._settings.callback_timeout_ms > 0:
            deadline = self._clock.now_ms() + self._settings.callback_timeout_ms
            heapq.heappush(self._deadlines, (deadline, callback.seq, callback))
        if self._bus.per_message:
            self._bus.publish(
                ev.ProcessStarted(self._clock.now_ms(), ti.name, ssp, envelope.offset, ti.in_flight)
            )
        try:
            if ti.kind is TaskKind.CALLBACK:
                ti.task.process_async(envelope, ti.collector, coordinator, callback)
            elif ti.kind is TaskKind.COROUTINE:
                loop = self._loop
                assert loop is not None
                loop.create_task(_settle_coroutine(ti.process(envelope, ti.collector, coordinator), callback))
            else:
                assert self._executor is not None
                future = self._executor.submit(ti.process, envelope, ti.collector, coordinator)
                future.add_done_callback(functools.partial(_settle_from_future, callback))
        except Exception as exc:
            callback.failure(exc)
        if self._completions:
            self._drain_completions()

    def _on_partition_end(self, ti: TaskInstance, ssp: SystemStreamPartition) -> None:
        self._consumers.refill(ssp)
        ti.open_ssps.discard(ssp)
        if not ti.open_ssps:
            ti.end_of_stream = True
        if self._bus.active:
            self._bus.publish(ev.EndOfStreamReached(self._clock.now_ms(), ti.name, ssp, False))


async def _settle_coroutine(coroutine: Coroutine[Any, Any, Any], callback: TaskCallbackImpl) -> None:
    """Run an ``async def process`` and settle its callback the moment it returns or raises."""
    try:
        await coroutine
    except asyncio.CancelledError:
        callback.failure(asyncio.CancelledError(f"processing of offset {callback.offset} was cancelled"))
        raise
    except Exception as exc:
        callback.failure(exc)
    else:
        callback.complete()


def _settle_from_future(callback: TaskCallbackImpl, future: Future[Any]) -> None:
    error = future.exception()
    if error is not None:
        callback.failure(error)
    else:
        callback.complete()
