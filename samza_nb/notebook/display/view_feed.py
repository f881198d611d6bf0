"""What both job monitors share (one container's, :mod:`.monitor`; a job of several containers',
:mod:`.containers_monitor`) to feed their views: the elapsed time and rate from successive processed counts,
and handing each new view to the listeners."""

from __future__ import annotations

import logging
import time
from collections import deque
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from samza_nb.notebook.display.views import JobView
    from samza_nb.notebook.runs.runnable import Listener

log = logging.getLogger(__name__)


def notify(listeners: list[Listener], view: JobView) -> None:
    """Hand ``view`` to every listener; one that raises is logged and removed."""
    for listener in list(listeners):
        try:
            listener(view)
        except Exception:
            log.exception("a job view listener failed; removing it")
            listeners.remove(listener)


class Throughput:
    """Elapsed time and throughput from successive processed counts: the rate over about the last second
    (the average over the run is ``processed / elapsed``, :attr:`JobView.average_rate`)."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()
        self._samples: deque[tuple[float, int]] = deque([(self._t0, 0)], maxlen=64)

    def restart(self) -> None:
        """The job starts now, with nothing processed: the first sample's rate is its count over the time
        since (a job done within one sample shows its true rate, not 0)."""
        self._t0 = time.monotonic()
        self._samples.clear()
        self._samples.append((self._t0, 0))

    def sample(self, processed: int, done: bool) -> tuple[float, float]:
        """Record ``processed`` now; returns (seconds since the start, messages per second over about the
        last second). ``done`` is accepted for callers that still pass it; the rate means the same."""
        now = time.monotonic()
        elapsed = now - self._t0
        samples = self._samples
        samples.append((now, processed))
        while len(samples) > 2 and now - samples[1][0] >= 1.0:
            samples.popleft()
        first_t, first_n = samples[0]
        return elapsed, (processed - first_n) / (now - first_t) if now > first_t else 0.0


__all__ = ["Throughput", "notify"]
