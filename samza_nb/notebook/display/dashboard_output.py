"""What a dashboard leaves in its cell: the live widget and, beside it, a static HTML snapshot that keeps up
with the job, so a notebook saved at any moment shows the job as it was then.

A saved notebook keeps a widget's output only as a reference to a widget model living in the kernel: once
that kernel is gone (a restart, a shutdown, the notebook opened elsewhere) no front-end can show it
(JupyterLab says "Error displaying widget: model not found"). So :class:`DashboardOutput` shows two outputs:

- the widget (its own display id), live while the job runs; when the job ends it becomes the final static
  snapshot (the chart as a picture) and the widgets close;
- the snapshot (another display id: ``text/html`` and ``text/plain``), sent again by ``update_display`` at
  most :data:`SNAPSHOT_EVERY_S` behind the widget, saying when it was taken and that the live view needs the
  kernel that ran it; emptied when the job ends (the widget's output then holds the final snapshot).

Why not the snapshot as the ``text/html`` of the widget's own output: JupyterLab renders the widget view of
an output whenever it has one (a reopened notebook shows the error, never the ``text/html`` beside it), and
each update of that output makes it build a new view of every widget (a flash, and views that pile up).
Instead a ``<style>`` in the snapshot (CSS ``:has``: JupyterLab, Notebook 7) hides the snapshot while the
live widget shows in the same output area, and hides the widget's output once its kernel or its model is
gone (frozen after a restart, or an error in a notebook reopened), so the snapshot then shows alone.
Elsewhere (nbconvert, GitHub) the snapshot shows as it is.

When the kernel exits while a job runs (a restart, a shutdown), an exit hook sends one last snapshot saying
so and closes the widgets, so a front-end still open shows that snapshot rather than a dashboard frozen at
"running" (best effort: the messages must leave before the kernel does).
"""

from __future__ import annotations

import atexit
import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from samza_nb.notebook.display.dashboard import Dashboard
    from samza_nb.notebook.display.views import JobView

Displayer = Callable[..., Any]
"""IPython's ``display`` (or one like it): called with ``display_id=True`` it returns a handle with
``update``."""

SNAPSHOT_EVERY_S = 1.5
"""The most the snapshot lags behind the live widget (seconds) while the job runs."""

DISCONNECTED = "jupyter-widgets-disconnected"
"""The class ipywidgets puts on a view whose model lost its kernel (a restart): the view is frozen."""


def snapshot_style(dashboard_id: str) -> str:
    """The ``<style>`` that, in JupyterLab and Notebook 7, hides the snapshot while the live dashboard
    ``dashboard_id`` shows in the same output area; once the widgets lost their kernel (a frozen view,
    ipywidgets' ``jupyter-widgets-disconnected``) or their model (a widget output with nothing rendered:
    the notebook reopened after the kernel that ran it is gone), it hides the widget output instead."""
    live, snapshot = f"samza-live-{dashboard_id}", f"samza-snapshot-{dashboard_id}"
    area = f".jp-OutputArea:has(.{snapshot})"
    empty_widget = ".jp-OutputArea-output.jupyter-widgets:not(:has(*))"  # its error says "model not found"
    return (
        "<style>"
        f".jp-OutputArea:has(.{live}:not(.{DISCONNECTED}))"
        f" .jp-OutputArea-child:has(.{snapshot}){{display:none}}"
        f"{area} .jp-OutputArea-child:has(.{live}.{DISCONNECTED}){{display:none}}"
        f"{area} {empty_widget}{{display:none}}"  # (a :has inside a :has is no selector at all)
        "</style>"
    )


def _clock() -> str:
    return time.strftime("%H:%M:%S")


class DashboardOutput:
    """Shows ``dashboard`` with ``display``: the live widget, then its snapshot (see the module's text).

    The dashboard's updater calls :meth:`refresh` after each render and :meth:`end` once the run ended.
    ``refreshes`` counts snapshots sent after the first; ``shown_processed`` is the processed count the
    latest snapshot shows (None before the job's first view)."""

    def __init__(
        self, dashboard: Dashboard, display: Displayer, *, every_s: float = SNAPSHOT_EVERY_S
    ) -> None:
        self.dashboard = dashboard
        self.every_s = every_s
        self.refreshes = 0
        self.shown_processed: int | None = None
        self.ended = False
        self._lock = threading.Lock()
        self._shown = ""
        self._due = time.monotonic() + every_s
        dashboard.output = self
        self._widget = display(dashboard, display_id=True)
        self._snapshot = display(self._bundle(), raw=True, display_id=True)
        _watch_kernel_exit(self)

    def _bundle(self, note: str | None = None) -> dict[str, str]:
        dashboard = self.dashboard
        if note is None:
            note = f"snapshot at {_clock()}; the live view needs the kernel that ran it"
        self.shown_processed = dashboard.view.processed if dashboard.view is not None else None
        html = snapshot_style(dashboard.id) + dashboard.snapshot_html(note=note)
        return {"text/html": html, "text/plain": f"({note})\n{dashboard.text}"}

    def refresh(self, view: JobView | None = None) -> bool:
        """Send the snapshot again when :attr:`every_s` passed since the last one and the dashboard shows
        something new; True when it was sent. ``view`` is the view just rendered (unused: the dashboard
        holds it)."""
        now = time.monotonic()
        with self._lock:
            if self.ended or now < self._due:
                return False
            self._due = now + self.every_s
            shown = self.dashboard.snapshot_html()
            if shown == self._shown:
                return False
            self._shown = shown
            self._snapshot.update(self._bundle(), raw=True)
            self.refreshes += 1
            return True

    def end(self, _run: object = None, dashboard: Dashboard | None = None) -> None:
        """The job ended: the widget's output becomes the final snapshot, the snapshot output empties and
        the widgets close (their models leave the front-end)."""
        dashboard = dashboard or self.dashboard
        with self._lock:
            if self.ended:
                return
            self.ended = True
        self._widget.update({"text/html": dashboard.snapshot_html(), "text/plain": dashboard.text}, raw=True)
        self._snapshot.update({"text/html": "", "text/plain": ""}, raw=True)
        dashboard.close()

    def kernel_exiting(self) -> None:
        """The kernel is exiting while the job runs: a last snapshot says so, and the widgets close (a
        front-end still open shows the snapshot, not a frozen dashboard)."""
        with self._lock:
            if self.ended:
                return
            self.ended = True
        note = (
            f"the kernel stopped at {_clock()} while the job ran: a snapshot of that moment; the live view "
            "needs the kernel that ran it"
        )
        self._snapshot.update(self._bundle(note), raw=True)
        self.dashboard.close()


_LIVE: weakref.WeakSet[DashboardOutput] = weakref.WeakSet()
_hooked = False
_hook_lock = threading.Lock()


def _watch_kernel_exit(output: DashboardOutput) -> None:
    """Tell ``output`` when the kernel exits (in a Jupyter kernel only: a terminal has no front-end)."""
    global _hooked
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - the notebook layer needs IPython
        return
    if getattr(get_ipython(), "kernel", None) is None:
        return
    with _hook_lock:
        _LIVE.add(output)
        if not _hooked:
            _hooked = True
            atexit.register(kernel_exiting)  # runs before ipykernel's own (its IOPub thread still sends)


def kernel_exiting() -> None:
    """Every dashboard still live says the kernel stopped (see :meth:`DashboardOutput.kernel_exiting`)."""
    for output in list(_LIVE):
        try:
            output.kernel_exiting()
        except Exception:  # exiting anyway: nothing to tell the user with
            continue


__all__ = ["SNAPSHOT_EVERY_S", "DashboardOutput", "Displayer", "kernel_exiting", "snapshot_style"]
