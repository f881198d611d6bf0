"""The dashboard's steering widgets: Pause / Step / Resume buttons, a live concurrency slider and, for a job
with stream priorities, a priority field per input stream.

They call the same methods as ``samza_nb.notebook.job()`` and the steering magics, through a
:class:`Steerable` the session hands over once the run started. A widget callback runs on the kernel's
thread, which must not wait for the job: each command runs on a short-lived thread of its own and writes its
outcome (the step taken, the values in force, or the error) into the ``note`` line below the buttons.

While the job is paused, :meth:`SteerControls.header_suffix` marks the dashboard's header ``paused`` and
the note's second line shows the message the chooser picks next and why (``peek``: the decision is made
then and kept, so the next Step processes exactly that message); it is asked again after each step.
The priority fields appear once the job runs, when its chooser has priority tiers (a priority or bootstrap
stream configured at start), one per stream with a tier; a stream given a tier later (``%samza_set``) gets its
field at the next render. A field's new value is set at the next message boundary. The slider and the
fields follow the values in force: a ``%samza_set`` in a cell moves them at the next render.

Every widget keeps its width (``flex: 0 0 auto``) and the dashboard's row of controls wraps, so at
1,200 to 1,400 px the slider, the fields and the button labels show whole. A peek that fails (a job that
is starting, or stopping) shows in the next-message line, which clears once the job runs again.

CSS classes: ``samza-pause``, ``samza-step``, ``samza-resume``, ``samza-concurrency``, ``samza-priority``,
``samza-steer-note``, ``samza-next`` (the next message's line) and ``samza-paused`` (the header's mark).
"""

from __future__ import annotations

import html
import importlib
import re
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.notebook.display.steps import step_row

if TYPE_CHECKING:
    from samza_nb.container.steering.steps import NextMessage, Steps

MAX_CONCURRENCY = 64
"""The slider's top (``task.max.concurrency`` 1..64; ``%samza_set`` takes any value)."""

PAUSE_TIMEOUT_S = 30.0
NOTHING_NEXT = "next: nothing buffered (Step waits for the next message)"
_PRIORITY = re.compile(r"^systems\.([^.]+)\.streams\.(.+)\.samza\.priority$")


class Steerable(Protocol):
    """What the buttons steer: the notebook's job handle (:class:`~..runs.steering.NotebookJob`)."""

    @property
    def paused(self) -> bool:
        """True while the job is paused."""
        ...

    @property
    def processed(self) -> int:
        """Messages processed so far."""
        ...

    def peek(self, timeout: float | None = None) -> NextMessage | None:
        """While paused: the message processed next, and why."""
        ...

    def pause(self, timeout: float | None = None) -> None:
        """Pause, waiting until the job is quiet."""
        ...

    def step(self, n: int = 1, timeout: float | None = None) -> Steps:
        """Process ``n`` messages of the paused job."""
        ...

    def resume(self) -> None:
        """Dispatch again."""
        ...

    def set(self, changes: Mapping[str, Any] | None = None, **keywords: Any) -> dict[str, str]:
        """Change live knobs; the values in force."""
        ...

    @property
    def knobs(self) -> Mapping[str, str]:
        """The live knobs' values in force as the last ``set`` returned them (empty before the first)."""
        ...


class SteerControls:
    """The buttons, the slider and the note of one job's dashboard. ``target()`` is the job's handle
    (None before the run exists); ``concurrency`` the slider's first value. ``widgets`` go beside the
    Stop button, ``note`` below them. ``commands`` counts the commands that finished (for tests)."""

    def __init__(self, target: Callable[[], Steerable | None], concurrency: int = 1) -> None:
        w = importlib.import_module("ipywidgets")  # no type information: Any, on purpose
        self._target = target
        self.pause_button = self._button(w, "Pause", "no new message; in-flight ones complete", "pause")
        self.step_button = self._button(w, "Step", "process the next message (while paused)", "step")
        self.resume_button = self._button(w, "Resume", "dispatch again", "resume")
        self.pause_button.on_click(lambda _b: self._run("pause", self._pause))
        self.step_button.on_click(lambda _b: self._run("step", self._step))
        self.resume_button.on_click(lambda _b: self._run("resume", self._resume))
        self.slider = w.IntSlider(
            value=max(1, min(concurrency, MAX_CONCURRENCY)),
            min=1,
            max=MAX_CONCURRENCY,
            description="concurrency",
            continuous_update=False,
            style={"description_width": "initial"},
            layout=w.Layout(width="280px", min_width="280px", flex="0 0 auto"),
        )
        self.slider.add_class("samza-concurrency")
        self.slider.observe(self._slid, names="value")
        self.note = w.HTML(value="")
        self.note.add_class("samza-steer-note")
        self.priorities = w.HBox([], layout=w.Layout(flex_flow="row wrap", grid_gap="6px", flex="0 1 auto"))
        self._fields: dict[str, Any] = {}  # priority key -> its field
        self._fields_lock = threading.Lock()
        self.widgets = (self.pause_button, self.step_button, self.resume_button, self.slider, self.priorities)
        self.commands = 0
        self._w = w
        self._lock = threading.Lock()
        self._said = ""
        self._next = ""
        self._next_for: int | None = None  # the processed count the next line was asked at
        self._knobs_asked = False
        self._knobs_shown: Mapping[str, str] | None = None
        self._syncing = False  # the widgets are being set to the values in force: no set() for it
        self._peeking = False

    @staticmethod
    def _button(w: Any, label: str, tooltip: str, css: str) -> Any:
        # Wide enough for "Resume" in JupyterLab's font (80px cut it to "Re…").
        button = w.Button(
            description=label,
            tooltip=tooltip,
            layout=w.Layout(width="96px", min_width="96px", flex="0 0 auto"),
        )
        button.add_class(f"samza-{css}")
        return button

    # -- rendering (the dashboard thread) --------------------------------------------------------------------
    def header_suffix(self, done: bool) -> str:
        """`` · paused`` while the job is paused (empty otherwise); buttons follow the state: Step and
        Resume only while paused, nothing once the job ended."""
        target = self._target()
        paused = not done and target is not None and target.paused
        for button, disabled in (
            (self.pause_button, done or paused),
            (self.step_button, done or not paused),
            (self.resume_button, done or not paused),
        ):
            if button.disabled != disabled:
                button.disabled = disabled
        if done and not self.slider.disabled:
            self.slider.disabled = True
            for field in self.priorities.children:
                field.disabled = True
        if target is not None and not done and not self._knobs_asked:
            self._knobs_asked = True
            self._run("set", self._show_knobs, count=False)
        if target is not None and not done:
            self._sync(target.knobs)
        if paused and target is not None:
            processed = target.processed
            if (processed != self._next_for or self._next == NOTHING_NEXT) and not self._peeking:
                self._next_for = processed  # asked again after a step, or until input comes
                self._peeking = True
                self._run("peek", self._peek, count=False)
        elif self._next_for is not None or self._next:
            self._next_for = None
            self._show_next("")
        return (
            " · <span class='samza-paused' style='color:var(--jp-warn-color1, #b58900)'><b>paused</b></span>"
            if paused
            else ""
        )

    # -- commands (each on a thread of its own) -------------------------------------------------------------
    def _run(self, what: str, command: Callable[[Steerable], str], *, count: bool = True) -> None:
        """Run ``command`` on a thread of its own; its text goes into the note (a ``count``-ed command's
        always, another's only when it has one to say)."""
        target = self._target()
        if target is None:
            self._say(f"{what}: the job has not started yet")
            return

        def work() -> None:
            try:
                with self._lock:  # one command at a time, in the order clicked
                    text = command(target)
            except Exception as exc:
                text = f"{what}: {type(exc).__name__}: {' '.join(str(exc).split())}"
            if count or text:
                self._say(text)
            if count:
                self.commands += 1

        threading.Thread(target=work, name=f"samza-nb dashboard {what}", daemon=True).start()

    def _say(self, text: str) -> None:
        self._said = text
        self._draw()

    def _sync(self, knobs: Mapping[str, str]) -> None:
        """Show the values in force (after a ``%samza_set``, or a click): the slider and the fields move
        without setting anything again."""
        if knobs is self._knobs_shown or not knobs:
            return
        self._knobs_shown = knobs
        self._syncing = True
        try:
            concurrency = knobs.get("task.max.concurrency")
            if concurrency is not None:
                value = int(concurrency)
                if value > self.slider.max:
                    self.slider.max = value
                if self.slider.value != value:
                    self.slider.value = value
            self._add_fields(knobs)
            for key, field in list(self._fields.items()):
                if key in knobs and field.value != int(knobs[key]):
                    field.value = int(knobs[key])
        finally:
            self._syncing = False

    def _show_next(self, text: str) -> None:
        self._next = text
        self._draw()

    def _draw(self) -> None:
        lines = [f"<div>{html.escape(self._said)}</div>"] if self._said else []
        if self._next:
            lines.append(f"<div class='samza-next'>{html.escape(self._next)}</div>")
        self.note.value = f"<div style='font-size:var(--jp-ui-font-size1, 13px)'>{''.join(lines)}</div>"

    def _peek(self, target: Steerable) -> str:
        try:
            upcoming = target.peek(PAUSE_TIMEOUT_S) if target.paused else None
        except Exception as exc:  # shown as the next line, which clears once the job runs (or asks again)
            self._next_for = None
            self._show_next(f"next: not known yet ({type(exc).__name__}: {' '.join(str(exc).split())})")
            return ""
        finally:
            self._peeking = False
        if not target.paused:
            return ""
        if upcoming is None:
            self._show_next(NOTHING_NEXT)
            return ""
        message = upcoming.message if upcoming.key is None else f"{upcoming.key}: {upcoming.message}"
        text = " ".join(repr(message).split())
        text = text if len(text) <= 60 else text[:59] + "…"
        self._show_next(
            f"next: {upcoming.task} · {upcoming.ssp}@{upcoming.offset} · {text} · why: {upcoming.reason}"
        )
        return ""

    def _show_knobs(self, target: Steerable) -> str:
        """Add a priority field per prioritised input stream when the job's chooser has priority tiers."""
        self._add_fields(target.set({}))
        return ""

    def _add_fields(self, values: Mapping[str, str]) -> None:
        """A field for each stream priority in ``values`` that has none yet (a stream put into a tier by a
        ``%samza_set`` after the job started gets its field at the next render)."""
        w = self._w
        with self._fields_lock:
            added = []
            for key, value in values.items():
                match = _PRIORITY.match(key)
                if match is None or key in self._fields:
                    continue
                field = w.IntText(
                    value=int(value),
                    description=f"{match.group(2)} priority",
                    style={"description_width": "initial"},
                    layout=w.Layout(width="auto", min_width="190px", flex="0 0 auto"),
                )
                field.add_class("samza-priority")
                field.observe(
                    lambda change, key=key: self._set_priority(key, int(change["new"])), names="value"
                )
                added.append(field)
                self._fields[key] = field
            if added:
                self.priorities.children = (*self.priorities.children, *added)

    def _set_priority(self, key: str, value: int) -> None:
        if self._syncing:
            return

        def apply(target: Steerable) -> str:
            values = target.set({key: value})
            return f"{key} = {values[key]}"

        self._run("set", apply)

    @staticmethod
    def _pause(target: Steerable) -> str:
        target.pause(PAUSE_TIMEOUT_S)
        return "paused: every task committed; Step processes the next message"

    @staticmethod
    def _step(target: Steerable) -> str:
        steps = target.step(1, PAUSE_TIMEOUT_S)
        if not steps:
            return f"no step taken ({steps.stopped_early or 'nothing to process'})"
        task, where, why, message, outputs, writes = step_row(steps[0])
        return f"stepped: {task} · {where} · {why} · {message} · out: {outputs} · writes: {writes}"

    @staticmethod
    def _resume(target: Steerable) -> str:
        target.resume()
        return "resumed"

    def _slid(self, change: Mapping[str, Any]) -> None:
        if self._syncing:
            return
        value = int(change["new"])

        def apply(target: Steerable) -> str:
            values = target.set({"task.max.concurrency": value})
            return f"task.max.concurrency = {values['task.max.concurrency']}"

        self._run("set", apply)

    def close(self) -> None:
        """Close the widgets."""
        for widget in (*self.priorities.children, *self.widgets, self.note):
            widget.close()


__all__ = ["MAX_CONCURRENCY", "SteerControls", "Steerable"]
