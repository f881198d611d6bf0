"""The dashboard's steering widgets: Pause / Step / Resume buttons and a live concurrency slider.

They call the same methods as ``samza_nb.notebook.job()`` and the steering magics, through a
:class:`Steerable` the session hands over once the run started. A widget callback runs on the kernel's
thread, which must not wait for the job: each command runs on a short-lived thread of its own and writes its
outcome (the step taken, the values in force, or the error) into the ``note`` line below the buttons.

While the job is paused, :meth:`SteerControls.header_suffix` marks the dashboard's header ``paused``. The
message the chooser would pick next is not shown: peeking it would mean asking the chooser without taking
the message, which the choosers do not offer; ``%samza_step`` shows each decision as it is made.

CSS classes: ``samza-pause``, ``samza-step``, ``samza-resume``, ``samza-concurrency``, ``samza-steer-note``
and ``samza-paused`` (the header's mark).
"""

from __future__ import annotations

import html
import importlib
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from samza_nb.notebook.display.steps import step_row

if TYPE_CHECKING:
    from samza_nb.container.loop.stepping import Steps

MAX_CONCURRENCY = 64
"""The slider's top (``task.max.concurrency`` 1..64; ``%samza_set`` takes any value)."""

PAUSE_TIMEOUT_S = 30.0


class Steerable(Protocol):
    """What the buttons steer: the notebook's job handle (:class:`~..runs.steering.NotebookJob`)."""

    @property
    def paused(self) -> bool:
        """True while the job is paused."""
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
            layout=w.Layout(width="260px"),
        )
        self.slider.add_class("samza-concurrency")
        self.slider.observe(self._slid, names="value")
        self.note = w.HTML(value="")
        self.note.add_class("samza-steer-note")
        self.widgets = (self.pause_button, self.step_button, self.resume_button, self.slider)
        self.commands = 0
        self._lock = threading.Lock()
        self._paused = False

    @staticmethod
    def _button(w: Any, label: str, tooltip: str, css: str) -> Any:
        button = w.Button(description=label, tooltip=tooltip, layout=w.Layout(width="80px"))
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
        return (
            " · <span class='samza-paused' style='color:var(--jp-warn-color1, #b58900)'><b>paused</b></span>"
            if paused
            else ""
        )

    # -- commands (each on a thread of its own) -------------------------------------------------------------
    def _run(self, what: str, command: Callable[[Steerable], str]) -> None:
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
            self._say(text)
            self.commands += 1

        threading.Thread(target=work, name=f"samza-nb dashboard {what}", daemon=True).start()

    def _say(self, text: str) -> None:
        self.note.value = f"<span style='font-size:var(--jp-ui-font-size1, 13px)'>{html.escape(text)}</span>"

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
        value = int(change["new"])

        def apply(target: Steerable) -> str:
            values = target.set({"task.max.concurrency": value})
            return f"task.max.concurrency = {values['task.max.concurrency']}"

        self._run("set", apply)

    def close(self) -> None:
        """Close the widgets."""
        for widget in (*self.widgets, self.note):
            widget.close()


__all__ = ["MAX_CONCURRENCY", "SteerControls", "Steerable"]
