"""Batching: keep choosing the same partition, up to a batch size, while it has envelopes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from samza_nb.chooser.base import NO_ROUND
from samza_nb.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from samza_nb.api.streams import IncomingMessageEnvelope, SystemStreamPartition
    from samza_nb.chooser.base import MessageChooser

BATCH_SIZE_KEY = "task.consumer.batch.size"


class BatchingChooser:
    """Wraps a chooser and prefers the partition it chose last, ``batch_size`` envelopes in a row at most.

    Promises (docs/architecture.md §4, Samza's BatchingChooser):

    - When the wrapped chooser returns an envelope of SSP ``s``, ``s`` becomes the preferred SSP and the
      batch count is 1.
    - While ``s`` is preferred, a new envelope of ``s`` given to ``update`` is held here instead of going to
      the wrapped chooser, and the next ``choose`` returns it without asking the wrapped chooser.
    - Once ``batch_size`` envelopes of ``s`` were returned in a row, the preference resets and the wrapped
      chooser decides again. When no envelope of ``s`` is held at a ``choose``, the wrapped chooser
      decides too (and its choice becomes the new preferred SSP).
    - The batching layer sits outside priority: a batch may run ahead of a higher tier (as in Samza).

    ``batch_size`` must be at least 1 (a :class:`ConfigError` naming ``task.consumer.batch.size``
    otherwise). ``update`` and ``choose`` are per-message; they are instance attributes (bound methods).
    """

    __slots__ = (
        "_batch_size",
        "_count",
        "_held",
        "_preferred",
        "_wrapped",
        "batch_resets",
        "choose",
        "update",
    )

    update: Callable[[IncomingMessageEnvelope], None]
    choose: Callable[[], IncomingMessageEnvelope | None]

    def __init__(self, wrapped: MessageChooser, batch_size: int) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ConfigError(
                f"{BATCH_SIZE_KEY}={batch_size!r} is not valid for a batching chooser: expected an "
                "integer >= 1",
                key=BATCH_SIZE_KEY,
            )
        self._wrapped = wrapped
        self._batch_size = batch_size
        self._preferred: SystemStreamPartition | None = None
        self._held: IncomingMessageEnvelope | None = None
        self._count = 0
        self.batch_resets = 0
        """How many batches ended because they reached ``batch_size`` (Samza's ``batch-resets``)."""
        self.update = self._update
        self.choose = self._choose

    # -- introspection ---------------------------------------------------------------------------------
    @property
    def wrapped(self) -> MessageChooser:
        """The chooser that decides when no batch is running."""
        return self._wrapped

    @property
    def batch_size(self) -> int:
        """The most envelopes of one SSP returned in a row."""
        return self._batch_size

    @property
    def preferred_ssp(self) -> SystemStreamPartition | None:
        """The SSP of the running batch, if any."""
        return self._preferred

    @property
    def held_envelope(self) -> IncomingMessageEnvelope | None:
        """The envelope of the preferred SSP held back for the next ``choose``, if any."""
        return self._held

    @property
    def batch_count(self) -> int:
        """Envelopes of the preferred SSP returned so far in the running batch."""
        return self._count

    def set_batch_size(self, batch_size: int) -> None:
        """Change the batch size live (between two choices): a running batch that already reached the new
        size ends now. The same checks as the constructor's."""
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ConfigError(
                f"{BATCH_SIZE_KEY}={batch_size!r} is not valid for a batching chooser: expected an "
                "integer >= 1",
                key=BATCH_SIZE_KEY,
            )
        self._batch_size = batch_size
        if self._preferred is not None and (batch_size == 1 or self._count >= batch_size):
            if self._held is not None:
                self._wrapped.update(self._held)  # no batch holds it any more: the inner choosers decide
                self._held = None
            self._preferred = None
            self._count = 0
            self.batch_resets += 1

    # -- lifecycle -------------------------------------------------------------------------------------
    def register(self, ssp: SystemStreamPartition, offset: str | None) -> None:
        """Forwarded to the wrapped chooser."""
        self._wrapped.register(ssp, offset)

    def start(self) -> None:
        """Forwarded to the wrapped chooser."""
        self._wrapped.start()

    def stop(self) -> None:
        """Forwarded to the wrapped chooser; a held envelope is dropped."""
        self._held = None
        self._wrapped.stop()

    # -- per message -----------------------------------------------------------------------------------
    def _update(self, envelope: IncomingMessageEnvelope) -> None:
        # SSPs are interned: identity is equality.
        if envelope.ssp is self._preferred:
            self._held = envelope
            return
        self._wrapped.update(envelope)

    def _choose(self) -> IncomingMessageEnvelope | None:
        envelope = self._held
        if envelope is None:
            envelope = self._wrapped.choose()
            if envelope is not None:
                if self._batch_size > 1:
                    self._preferred = envelope.ssp
                    self._count = 1
                else:
                    # A batch of one is already complete (Samza would let a second one through).
                    self._preferred = None
                    self._count = 0
                    self.batch_resets += 1
            return envelope
        self._held = None
        count = self._count + 1
        if count >= self._batch_size:
            self._preferred = None
            self._count = 0
            self.batch_resets += 1
        else:
            self._count = count
        return envelope

    # -- runs: a caller that takes a batch's envelopes straight from its own buffer ---------------------
    def choose_run(self) -> tuple[IncomingMessageEnvelope | None, int]:
        """``choose()``, plus how many more envelopes of the chosen SSP this layer would return in a row
        if they were offered at once (the room left in its batch).

        A caller may take up to that many envelopes of the SSP from its own buffer instead of offering
        them through ``update`` and asking ``choose``; it must then call :meth:`end_run` with how many it
        took before offering anything of that SSP again. The outcome is the same sequence of choices.
        """
        envelope = self._choose()
        if envelope is None or envelope.ssp is not self._preferred:
            return envelope, 0
        return envelope, self._batch_size - self._count

    def end_run(self, taken: int) -> None:
        """Account for ``taken`` envelopes of the preferred SSP that the caller took after
        :meth:`choose_run`."""
        if taken:
            count = self._count + taken
            if count >= self._batch_size:
                self._preferred = None
                self._count = 0
                self.batch_resets += 1
            else:
                self._count = count

    def choose_round(self) -> tuple[Sequence[IncomingMessageEnvelope], int]:
        """No rounds: a batch keeps choosing one SSP (its runs are :meth:`choose_run`'s)."""
        return NO_ROUND

    def __repr__(self) -> str:
        return f"BatchingChooser({self._wrapped!r}, batch_size={self._batch_size})"
