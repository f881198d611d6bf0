"""The steering magics' work: ``%samza_pause``, ``%samza_step``, ``%samza_peek``, ``%samza_resume``,
``%samza_set`` and ``%%samza_task --swap`` on the session's job handle
(:class:`~..runs.steering.NotebookJob`).

The parsing is in :mod:`.registration`; here each magic calls the handle and turns what the container
raises (a SamzaError, a ConfigError naming the key) into a one-line :class:`NotebookError`. A swap's
refusal names the task cell's line.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samza_nb.errors import SamzaError
from samza_nb.notebook.display.steps import PeekReport, StepsReport
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.runs.failures import task_cell_line
from samza_nb.notebook.runs.steering import steerable

if TYPE_CHECKING:
    from samza_nb.notebook.magics.task_cell import TaskDefinition
    from samza_nb.notebook.session import NotebookSession

DEFAULT_PAUSE_TIMEOUT_S = 30.0
"""How long ``%samza_pause`` waits for in-flight callbacks by default (the pause stays asked after it)."""


def pause(session: NotebookSession, name: str | None, timeout: float | None) -> str:
    """``%samza_pause``: pause the job, waiting until it is quiet; the line saying so."""
    job = session.job(name, "samza_pause")
    _call("samza_pause", lambda: job.pause(timeout))
    return (
        f"job {job.name!r} paused after {job.processed:,} messages (every task committed): "
        f"%samza_step [N] processes the next ones, %samza_resume {job.name} goes on"
    )


def step(session: NotebookSession, name: str | None, n: int, timeout: float | None) -> StepsReport:
    """``%samza_step N``: process ``n`` messages of the paused job; their table."""
    if n < 0:
        raise NotebookError(f"samza_step: N must be an integer >= 0, got {n}")
    job = session.job(name, "samza_step")
    steerable(job.run, "samza_step")
    if not job.paused:
        raise NotebookError(
            f"samza_step: job {job.name!r} is running: %samza_pause {job.name} first (a step processes "
            "the next messages of a paused job)"
        )
    steps = _call("samza_step", lambda: job.step(n, timeout))
    return StepsReport(job.name, steps)


def peek(session: NotebookSession, name: str | None, timeout: float | None) -> PeekReport:
    """``%samza_peek``: the message the paused job processes next, and why (the decision holds)."""
    job = session.job(name, "samza_peek")
    steerable(job.run, "samza_peek")
    if not job.paused:
        raise NotebookError(
            f"samza_peek: job {job.name!r} is running: %samza_pause {job.name} first (or start it with "
            "%samza_run --paused)"
        )
    return PeekReport(job.name, _call("samza_peek", lambda: job.peek(timeout)))


def resume(session: NotebookSession, name: str | None) -> str:
    """``%samza_resume``: dispatch again."""
    job = session.job(name, "samza_resume")
    was_paused = job.paused
    _call("samza_resume", job.resume)
    return f"job {job.name!r} resumed" if was_paused else f"job {job.name!r} was not paused: it runs on"


def set_knobs(session: NotebookSession, name: str | None, words: list[str]) -> str:
    """``%samza_set KEY=VALUE ...``: change live knobs; the knobs' values in force, one per line."""
    changes: dict[str, str] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key.strip():
            raise NotebookError(
                f"samza_set: {word!r} is not key=value (e.g. %samza_set task.max.concurrency=4)"
            )
        changes[key.strip()] = value.strip()
    if not changes:
        raise NotebookError("samza_set: give KEY=VALUE (e.g. %samza_set task.max.concurrency=4)")
    job = session.job(name, "samza_set")
    values = _call("samza_set", lambda: job.set(changes))
    lines = [f"{key} = {value}{'  (changed)' if key in changes else ''}" for key, value in values.items()]
    return f"job {job.name!r}, live knobs in force:\n" + "\n".join(lines)


def swap(
    session: NotebookSession,
    name: str | None,
    define: Callable[[], TaskDefinition],
    magic: str = "samza_task",
) -> str:
    """``%%samza_task --swap [NAME]`` (or ``%%samza_app --swap``): run the cell (``define()`` returns its
    TaskDefinition) and swap its class into the running job, keeping stores, offsets and timers (an
    application's graph must keep its shape). The cell is for the next run too."""
    job = session.job(name, f"{magic} --swap")
    steerable(job.run, f"{magic} --swap")
    definition = define()
    if definition.application and job.application is None:
        raise NotebookError(f"{magic} --swap: job {job.name!r} runs a task; the cell defines an application")
    if not definition.application and job.application is not None:
        raise NotebookError(f"{magic} --swap: job {job.name!r} runs an application; the cell defines a task")
    try:
        job.swap(definition.cls if definition.application else definition.factory())
    except SamzaError as exc:
        raise NotebookError(f"{magic} --swap: {_in_cell(exc, definition)}") from None
    session.swapped(job.name, definition)
    what = "application" if definition.application else "task"
    return (
        f"{what} {definition.name} swapped into job {job.name!r} after {job.processed:,} messages "
        "(stores, offsets and timers kept)" + (", still paused" if job.paused else "")
    )


def _call(magic: str, call: Any) -> Any:
    try:
        return call()
    except NotebookError:
        raise
    except SamzaError as exc:
        raise NotebookError(f"{magic}: {exc}") from None


def _in_cell(exc: SamzaError, definition: TaskDefinition) -> str:
    """The swap's refusal with ``at FILE:LINE (source)`` of the cell as ``at line N of the task cell``."""
    text = " ".join(str(exc).split())
    where = task_cell_line(exc, definition)
    if where is None or exc.__cause__ is None:
        return text
    frames = [
        f for f in traceback.extract_tb(exc.__cause__.__traceback__) if f.filename == definition.filename
    ]
    if not frames:
        return text
    frame = frames[-1]
    raw = f"at {frame.filename}:{frame.lineno}" + (f" ({frame.line.strip()})" if frame.line else "")
    raw = " " + " ".join(raw.split())
    return text.replace(raw, f" at {where}") if raw in text else f"{text} ({where})"


__all__ = ["pause", "peek", "resume", "set_knobs", "step", "swap"]
