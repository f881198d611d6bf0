"""The chooser of a replay (:class:`ReplayChooser`): it holds each partition's next message and hands out
only the one the recording has next, with the room of the recorded run it starts, so that a recorded run of
a sync task's messages replays as a run (the loop takes the rest straight from the partition's buffer, as
the recorded run did); at a recorded round, the rest of the round's row and the room of its further rows
(a round replays as a round).

It asks a :class:`RecordedTurns` (the replayer,
:class:`~samza_nb.container.recording.replay.ScheduleReplayer`) which message goes now, and names nothing
of the container.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition


class RecordedTurns(Protocol):
    """What the replay's chooser asks: the recorded next message of those held, its run's room, and the
    rest of its round."""

    def choose_run(
        self, held: dict[SystemStreamPartition, IncomingMessageEnvelope]
    ) -> tuple[IncomingMessageEnvelope | None, int]:
        """The message to hand out now of those ``held`` (taken out of it), or None; with how many more
        of its partition the recorded run it starts has (0: one message)."""

    def choose_round(
        self, held: dict[SystemStreamPartition, IncomingMessageEnvelope]
    ) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """Right after :meth:`choose_run` handed out a message with no room: the rest of its recorded
        round's row (taken out of ``held``) and how many further rows the recorded round has, or nothing
        (it goes one message at a time)."""


class ReplayChooser:
    """The chooser of a replay (a :class:`~samza_nb.chooser.base.RunChooser`): holds each partition's next
    message and hands out the one the recording has next, with the room of its recorded run."""

    def __init__(self, turns: RecordedTurns) -> None:
        self._turns = turns
        self._held: dict[SystemStreamPartition, IncomingMessageEnvelope] = {}

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Nothing to do: the recording says where each partition starts."""

    def start(self) -> None:
        """Nothing to do."""

    def stop(self) -> None:
        """Nothing to do."""

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Held until its turn."""
        self._held[envelope.ssp] = envelope

    def choose(self) -> IncomingMessageEnvelope | None:
        """The recorded next message once it is held, else None."""
        return self._turns.choose_run(self._held)[0]

    def choose_run(self) -> tuple[IncomingMessageEnvelope | None, int]:
        """:meth:`choose`, and the room of the recorded run it starts (the loop takes that many more of
        its partition straight from the buffer)."""
        return self._turns.choose_run(self._held)

    def end_run(self, taken: int) -> None:
        """Nothing to account for: the replayer hears of the run from the loop (its ``ran`` hook)."""

    def choose_round(self) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """The rest of the recorded round's row the last choice started, in the recorded order, and the
        room of its further rows (the loop takes those straight from the buffers, as the recorded round
        did); nothing when the recording has no round here."""
        return self._turns.choose_round(self._held)


__all__ = ["RecordedTurns", "ReplayChooser"]
