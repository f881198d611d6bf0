"""What a cell waiting for a job (``%samza_run --wait``) says while it waits: how to stop a job that went
idle before its inputs ended.

A job whose inputs end stops by itself, however long it takes; one whose input never ends keeps the cell
waiting for ever. So the note comes only when the job looks like the second: it is running, it processed
nothing new and has nothing in flight for :data:`NOTE_AFTER_S`, and some input partition has not reached
end-of-stream. A job that is starting (a Spark session, container processes) or busy is never told off.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from samza_nb.notebook.display.views import plural
from samza_nb.observe.states import ContainerState

if TYPE_CHECKING:
    from samza_nb.notebook.runs.job import JobRun

NOTE_AFTER_S = 2.0
"""How long a waited-for job must stay idle, before its inputs ended, for the cell to say how to stop it."""


def idle_note(run: JobRun, show: Callable[[str], None], *, stop_button: bool) -> Callable[[], None]:
    """A tick for the wait on ``run``: once the job stayed idle for NOTE_AFTER_S with inputs that have not
    ended, ``show`` one line saying so and how to stop it (``stop_button``: the dashboard has one); at most
    once, and never once a stop is under way."""
    last_processed = -1
    idle_since = time.monotonic()
    told = False

    def tick() -> None:
        nonlocal last_processed, idle_since, told
        if told or run.done or run.stopping:
            return
        view = run.view
        now = time.monotonic()
        if view.processed != last_processed or view.in_flight or view.state is not ContainerState.RUNNING:
            last_processed, idle_since = view.processed, now
            return
        if now - idle_since < NOTE_AFTER_S:
            return
        partitions = view.partitions
        open_partitions = [p for p in partitions if not p.ended]
        if not open_partitions:
            return  # every input ended: the job is finishing
        told = True
        how = "interrupt the kernel (■) or press Stop" if stop_button else "interrupt the kernel (■)"
        limit = f"; --timeout {run.timeout_s:g} s stops it" if run.timeout_s is not None else ""
        show(
            f"still waiting for job {view.job!r}: nothing new for {NOTE_AFTER_S:g} s and "
            f"{plural(len(open_partitions), 'input partition')} of {len(partitions)} not at end-of-stream "
            f"(an input that does not end keeps it running{limit}): {how} to stop it gracefully "
            "(every task commits)"
        )

    return tick


__all__ = ["NOTE_AFTER_S", "idle_note"]
