"""The MessageChooser protocol: decides which partition's message the container processes next."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.trace import ChoiceTrace

OffsetComparator = Callable[[str, str], int]
"""Compares two offsets of one partition: negative, zero or positive like ``cmp``."""


def integer_offset_comparator(a: str, b: str) -> int:
    """Compare offsets as integers ("2" < "10"), the rule of the in-memory and Kafka systems."""
    x, y = int(a), int(b)
    return (x > y) - (x < y)


class Composition:
    """A chooser built of layers (the default chooser): :func:`samza_nb.chooser.trace.chooser_layers` walks
    on into :attr:`composed`."""

    __slots__ = ()

    @property
    def composed(self) -> MessageChooser:
        """The outermost layer of the composition."""
        raise NotImplementedError


@runtime_checkable
class MessageChooser(Protocol):
    """Holds at most one envelope per SSP (given by ``update``) and picks the next one (``choose``).

    Lifecycle: ``register`` for every input SSP with its starting offset, then ``start``, then any number
    of ``update``/``choose``, then ``stop``. ``update`` is called for an SSP only when the chooser holds
    no envelope of it.
    """

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Announce an input SSP and the offset its first message will have (None if unknown)."""
        ...

    def start(self) -> None:
        """Called once after every SSP was registered, before the first update."""
        ...

    def stop(self) -> None:
        """Called once when the container stops."""
        ...

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Offer the next envelope of its SSP."""
        ...

    def choose(self) -> IncomingMessageEnvelope | None:
        """Return (and forget) the envelope to process next, or None to process nothing now."""
        ...


UNBOUNDED_RUN = 1 << 62
"""The room of a run that no choice of the chooser would cut: only the caller's own limit ends it."""

NO_ROUND: tuple[Sequence[IncomingMessageEnvelope], int] = ((), 0)
"""What :meth:`RunChooser.choose_round` returns when the choices do not go in rounds (never changed)."""


@runtime_checkable
class RunChooser(MessageChooser, Protocol):
    """A chooser that can hand out *runs*: several envelopes of one SSP chosen in a row, which the caller
    takes straight from its own buffer instead of offering each through ``update`` and asking ``choose``.

    The outcome must be exactly the sequence of choices plain ``update``/``choose`` would make when the
    caller offers an SSP's next envelope right after its previous one was chosen (and nothing else is
    offered meanwhile).
    """

    def choose_run(self) -> tuple[IncomingMessageEnvelope | None, int]:
        """``choose()``, plus the room of the run: how many more envelopes of the chosen SSP this chooser
        would return in a row if they were offered one at a time right after each choice.

        A caller may take up to that many envelopes of the SSP without offering them; it then calls
        :meth:`end_run` with how many it took before offering anything of that SSP again.
        """
        ...

    def end_run(self, taken: int) -> None:
        """Account for ``taken`` envelopes of the last chosen SSP taken after :meth:`choose_run`."""
        ...

    def choose_round(self) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """Right after :meth:`choose_run` chose an envelope with no room: the rest of its *round* and the
        round's room (how many further rows may follow), or an empty list (nothing taken) when this
        chooser's choices do not go in rounds.

        A round is envelopes held, returned (and forgotten) in the order ``choose`` would return them,
        such that with each SSP's next envelope offered right after its previous one was chosen, this
        chooser would go on choosing the round's SSPs (the chosen one first) in that same order, up to
        ``room`` further rows (:data:`UNBOUNDED_RUN`: round after round). The caller may take up to that
        many further rows of those SSPs in that order straight from its buffers. It must then give back
        every envelope of the round it did not start, in round order, through ``update`` before offering
        anything else.
        """
        ...


class SingleChoiceRuns:
    """Any MessageChooser seen as a RunChooser whose runs never hold more than the chosen envelope
    (a custom chooser decides every message itself)."""

    __slots__ = ("chooser",)

    def __init__(self, chooser: MessageChooser) -> None:
        self.chooser = chooser

    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Forwarded."""
        self.chooser.register(ssp, offset)

    def start(self) -> None:
        """Forwarded."""
        self.chooser.start()

    def stop(self) -> None:
        """Forwarded."""
        self.chooser.stop()

    def update(self, envelope: IncomingMessageEnvelope) -> None:
        """Forwarded."""
        self.chooser.update(envelope)

    def choose(self) -> IncomingMessageEnvelope | None:
        """Forwarded."""
        return self.chooser.choose()

    def choose_run(self) -> tuple[IncomingMessageEnvelope | None, int]:
        """The chooser's choice, with no room."""
        return self.chooser.choose(), 0

    def end_run(self, taken: int) -> None:
        """Nothing to account for: runs are empty."""

    def choose_round(self) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """No rounds: a custom chooser decides every message itself."""
        return NO_ROUND


def as_run_chooser(chooser: MessageChooser) -> RunChooser:
    """``chooser`` itself when it implements :class:`RunChooser`, else a wrapper whose runs are single
    choices."""
    if isinstance(chooser, RunChooser):
        return chooser
    return SingleChoiceRuns(chooser)


@runtime_checkable
class TracedChooser(MessageChooser, Protocol):
    """A chooser that explains its latest ``choose()`` (tracing on; see :mod:`samza_nb.chooser.trace`)."""

    @property
    def last_choice(self) -> ChoiceTrace | None:
        """The trace of the latest ``choose()``; None before the first (or while tracing is off)."""
        ...
