"""One thread that keeps every live dashboard of a notebook moving, whatever the kernel is doing.

A job runs on its own thread and publishes immutable JobViews; the kernel's main thread may be busy with
any cell (a ``time.sleep``, a CPU-bound loop). So the widgets are not updated by the job's loop nor by
the kernel's: :class:`DashboardUpdater` owns one daemon thread that, every ``refresh_s``, renders each
watched dashboard from its run's latest view (the dashboard sends only what changed), and, once a run is
done, renders its final view and hands the pair to ``on_end`` (which replaces the live widgets by a
static snapshot). After each render of a running job it calls the dashboard's ``on_render`` (which keeps
the HTML snapshot beside the widgets up to date, :mod:`.dashboard_output`). Widget updates leave through
ipykernel's IOPub thread, which takes messages from any thread. The thread sleeps when nothing is watched.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.notebook.display.dashboard import Dashboard
    from samza_nb.notebook.display.views import JobView
    from samza_nb.notebook.runs.job import JobRun

log = logging.getLogger(__name__)

EndCallback = Callable[["JobRun", "Dashboard"], None]
ViewOf = Callable[["JobRun"], "JobView"]
RenderCallback = Callable[["JobView"], object]


@dataclass(frozen=True, slots=True)
class _Watched:
    run: JobRun
    dashboard: Dashboard
    on_end: EndCallback
    view_of: ViewOf | None = None
    on_render: RenderCallback | None = None


class DashboardUpdater:
    """Renders the dashboards of running jobs from one thread, ``refresh_s`` apart (a few times a second
    at most). ``renders`` counts render passes (for tests: it moves while other cells run)."""

    def __init__(self, refresh_s: float = 0.2) -> None:
        self.refresh_s = refresh_s
        self.renders = 0
        self._watched: list[_Watched] = []
        self._lock = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None

    def watch(
        self,
        run: JobRun,
        dashboard: Dashboard,
        on_end: EndCallback,
        view_of: ViewOf | None = None,
        on_render: RenderCallback | None = None,
    ) -> None:
        """Keep ``dashboard`` showing ``run`` until the run is done, calling ``on_render(view)`` after each
        render while it runs; then call ``on_end(run, dashboard)`` (all on the updater's thread).
        ``view_of(run)`` gives the view to show (default: ``run.view``)."""
        with self._lock:
            self._watched.append(_Watched(run, dashboard, on_end, view_of, on_render))
            if self._thread is None or not self._thread.is_alive():
                self._closed = False
                self._thread = threading.Thread(target=self._loop, name="samza-nb dashboards", daemon=True)
                self._thread.start()
            self._lock.notify_all()

    @property
    def watching(self) -> int:
        """How many dashboards are live."""
        with self._lock:
            return len(self._watched)

    def flush(self, run: JobRun | None = None, timeout: float = 5.0) -> bool:
        """Wait until ``run``'s dashboard (default: every dashboard) rendered its run's end and left; call
        once the run is done. False after ``timeout``."""

        def settled() -> bool:
            return not any(run is None or item.run is run for item in self._watched)

        with self._lock:
            self._lock.notify_all()  # render now rather than at the next tick
            return self._lock.wait_for(settled, timeout)

    def close(self) -> None:
        """Stop the thread (live dashboards stop moving)."""
        with self._lock:
            self._closed = True
            self._lock.notify_all()

    def _loop(self) -> None:
        while True:
            with self._lock:
                self._lock.wait_for(lambda: self._closed or bool(self._watched))
                if self._closed:
                    return
                watched = list(self._watched)
            for item in watched:
                self._render(item)
            self.renders += 1
            with self._lock:
                if self._closed:
                    return
                if not any(item.run.done for item in self._watched):
                    self._lock.wait(self.refresh_s)

    def _render(self, item: _Watched) -> None:
        done = item.run.done  # read before the view: a done run's view is its final one
        try:
            view = item.view_of(item.run) if item.view_of is not None else item.run.view
            item.dashboard.render(view)
            if done:
                item.on_end(item.run, item.dashboard)
            elif item.on_render is not None:
                item.on_render(view)
        except Exception:  # a broken front-end must not stop the other dashboards
            log.exception("updating the dashboard of job %r failed", item.run.view.job)
            done = True
        if done:
            with self._lock:
                self._watched.remove(item)
                self._lock.notify_all()


__all__ = ["DashboardUpdater"]
