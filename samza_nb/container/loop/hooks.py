"""The run loop's plug-in points, declared as Protocols: what record/replay (:class:`LoopSchedule`) and
steering (:class:`Steering`) are asked by the loop, and the schedule a run has when it is neither recorded
nor replayed (:data:`NO_SCHEDULE`, whose hooks do nothing).

The loop calls these hooks; the objects behind them act on the loop only through :class:`RunLoop` and
:class:`LoopState` methods. This module names no other module of the loop at run time, so every part of
the loop may import it.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.container.loop.callbacks import TaskCallbackImpl
    from samza_nb.container.loop.task_instance import TaskInstance

Failed = tuple["IncomingMessageEnvelope", Exception]
"""The message of a run whose call raised, and what it raised."""

Row = tuple["IncomingMessageEnvelope", ...]
"""One envelope of each partition of a round, in the round's order."""

Outcome = tuple[int, int, "Row | None", "Row | None", "Exception | None"]
"""How far a round got: rows processed in full, the position of the call it stopped at (-1: it did not
stop), the row it stopped in, the last row processed in full, and what the call raised (None: it made a
coordinator request)."""


class LoopSchedule(Protocol):
    """Record or replay of a run's schedule, as the loop sees it (container/recording/schedule.py). Every hook
    is called on the loop's thread; the per-message ones (:meth:`dispatched`, :meth:`taken`) and the
    per-run ones (:meth:`ran`, :meth:`ran_round`) must cost nothing when nothing is recorded."""

    clock_timers: bool
    """False while replaying: window and commit fire at their recorded positions, not by the clock."""

    stepwise: bool
    """True when each step of an ``async def process`` is observed (:meth:`coroutine`): such tasks then
    take one message at a time on the general path."""

    def tick(self) -> None:
        """Once per loop iteration, before the timers."""

    def commit_timer_fired(self) -> None:
        """The clock's commit timer fired."""

    def loop_ended(self) -> None:
        """The loop left its main phase (stop requested, done, or failed)."""

    def dispatched(
        self, ti: TaskInstance, ssp: SystemStreamPartition, offset: str, callback: TaskCallbackImpl | None
    ) -> None:
        """A message starts on the general path, just before the task sees it (``callback``: its async
        callback; None: a sync call on the loop thread)."""

    def ran(
        self, ti: TaskInstance, first: IncomingMessageEnvelope, failed: Failed | None, count: int
    ) -> None:
        """``count`` messages of ``first``'s partition, from ``first`` on, ran inline one after another
        (``failed``: the last one's call raised)."""

    def ran_round(
        self, tasks: Sequence[TaskInstance], firsts: Sequence[IncomingMessageEnvelope], outcome: Outcome
    ) -> None:
        """A round of ``tasks`` ran inline from ``firsts`` (one envelope per task), as far as ``outcome``
        says."""

    def taken(self, callback: TaskCallbackImpl, error: BaseException | None) -> bool:
        """The loop takes the completion of an async callback (in the order it takes them): True to handle
        it now, False when the schedule holds it (it gives it back with :meth:`LoopState.requeue`)."""

    def polled(self, ssp: SystemStreamPartition, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """A batch of ``ssp`` was buffered as polled (once per batch, before any of it is chosen; only
        once :meth:`RunLoop.use_schedule` made this the loop's schedule)."""

    def task_ending(self, ti: TaskInstance) -> bool:
        """``ti``'s end-of-stream operation could run now: True to run it, False to hold it (the loop
        asks again when woken)."""

    def coroutine(self, ti: TaskInstance, coroutine: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, Any]:
        """The coroutine to run for the message of ``ti`` just :meth:`dispatched` (with :attr:`stepwise`:
        one that asks before each step)."""


class NoSchedule:
    """The schedule of a run neither recorded nor replayed: every hook does nothing."""

    clock_timers = True
    stepwise = False

    def tick(self) -> None:
        """Nothing."""

    def commit_timer_fired(self) -> None:
        """Nothing."""

    def loop_ended(self) -> None:
        """Nothing."""

    def dispatched(
        self, ti: TaskInstance, ssp: SystemStreamPartition, offset: str, callback: TaskCallbackImpl | None
    ) -> None:
        """Nothing."""

    def ran(
        self, ti: TaskInstance, first: IncomingMessageEnvelope, failed: Failed | None, count: int
    ) -> None:
        """Nothing."""

    def ran_round(
        self, tasks: Sequence[TaskInstance], firsts: Sequence[IncomingMessageEnvelope], outcome: Outcome
    ) -> None:
        """Nothing."""

    def taken(self, callback: TaskCallbackImpl, error: BaseException | None) -> bool:
        """Handled now."""
        return True

    def polled(self, ssp: SystemStreamPartition, envelopes: Sequence[IncomingMessageEnvelope]) -> None:
        """Nothing."""

    def task_ending(self, ti: TaskInstance) -> bool:
        """It runs."""
        return True

    def coroutine(self, ti: TaskInstance, coroutine: Coroutine[Any, Any, Any]) -> Coroutine[Any, Any, Any]:
        """``coroutine`` itself."""
        return coroutine


NO_SCHEDULE: LoopSchedule = NoSchedule()
"""The default schedule (nothing recorded, nothing forced, nothing spent)."""


class Steering(Protocol):
    """Pause, step and swap as the run loop sees them (container/steering/loop_steering.py): while one is
    asked for or under way the loop hands it the turn instead of dispatching (:meth:`RunLoop.steer_with`)."""

    async def steer(self) -> None:
        """Hold the loop while paused, stepping or swapping; return to let it run (or stop)."""


__all__ = ["NO_SCHEDULE", "Failed", "LoopSchedule", "NoSchedule", "Outcome", "Row", "Steering"]
