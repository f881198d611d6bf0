"""What ``%samza_step`` shows: the messages a paused job processed on request, one row each; and what
``%samza_peek`` shows: the message it processes next (:class:`PeekReport`).

A row: the task, ``ssp@offset``, why the chooser picked it, the message (``key: value`` when it has a key),
the envelopes it sent and the store writes it made (``store[key]: old → new``). HTML in Jupyter (CSS class
``samza-steps``), text in plain front-ends; long values are cut to :data:`WIDTH` characters.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from samza_nb.notebook.display.text_status import html_table, text_table

if TYPE_CHECKING:
    from samza_nb.container.steering.steps import NextMessage, Step, Steps

HEADERS = ("task", "ssp@offset", "why chosen", "message", "outputs", "store writes")
WIDTH = 60
"""The longest value a cell shows (longer ones end with ``…``)."""


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def next_row(upcoming: NextMessage) -> tuple[str, str, str, str]:
    """The task, ``ssp@offset``, why chosen and message of a message peeked or stepped."""
    message = _short(upcoming.message)
    if upcoming.key is not None:
        message = f"{_short(upcoming.key)}: {message}"
    return (upcoming.task, f"{upcoming.ssp}@{upcoming.offset}", upcoming.reason, message)


def step_row(step: Step) -> tuple[str, ...]:
    """The cells of one step's row."""
    outputs = "; ".join(f"{envelope.system_stream}: {_short(envelope.message)}" for envelope in step.outputs)
    writes = "; ".join(
        f"{store}[{_short(key)}]: {_short(old)} → {'(deleted)' if new is None else _short(new)}"
        for store, key, old, new in step.writes
    )
    return (*next_row(step), outputs or "—", writes or "—")


class StepsReport:
    """The steps of one ``%samza_step`` (``steps``, the :class:`Steps` the job returned), as a table; a
    last line says when fewer steps than asked were taken, and why."""

    def __init__(self, job: str, steps: Steps) -> None:
        self.job = job
        self.steps = steps

    @property
    def rows(self) -> list[tuple[str, ...]]:
        """One row of cells per step."""
        return [step_row(step) for step in self.steps]

    @property
    def note(self) -> str:
        """``job 'x': 3 steps, paused`` (and why it took fewer than asked)."""
        steps = self.steps
        count = f"{len(steps)} step{'s' if len(steps) != 1 else ''}"
        if steps.stopped_early:
            return f"job {self.job!r}: {count} of {steps.requested} ({steps.stopped_early})"
        return f"job {self.job!r}: {count}, paused again (%samza_step for more, %samza_resume to go on)"

    def __str__(self) -> str:
        table = text_table(HEADERS, self.rows) if self.steps else ""
        return "\n".join(part for part in (table, self.note) if part)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        table = html_table(HEADERS, self.rows, "samza-steps") if self.steps else ""
        return f"{table}<div class='samza-note'>{html.escape(self.note)}</div>"


class PeekReport:
    """What ``%samza_peek`` returns: the message a paused job processes next (``next``, a
    :class:`NextMessage`; None when nothing is buffered) and why the chooser picked it, as a one-row table."""

    def __init__(self, job: str, upcoming: NextMessage | None) -> None:
        self.job = job
        self.next = upcoming

    @property
    def note(self) -> str:
        """What the next step does."""
        if self.next is None:
            return f"job {self.job!r}: nothing buffered: %samza_step waits for the next message"
        return f"job {self.job!r}: %samza_step (or %samza_resume) processes this message first"

    def __str__(self) -> str:
        table = text_table(HEADERS[:4], [next_row(self.next)]) if self.next is not None else ""
        return "\n".join(part for part in (table, self.note) if part)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        table = html_table(HEADERS[:4], [next_row(self.next)], "samza-peek") if self.next is not None else ""
        return f"{table}<div class='samza-note'>{html.escape(self.note)}</div>"


__all__ = ["HEADERS", "PeekReport", "StepsReport", "next_row", "step_row"]
