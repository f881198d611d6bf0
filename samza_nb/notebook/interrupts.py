"""The kernel's interrupt (Jupyter's ■ button, SIGINT) stops a background job gracefully.

While idle, ipykernel ignores SIGINT, and around each cell it installs ``default_int_handler`` and then
restores what was there before. So once a job runs on the kernel's loop, :class:`InterruptRoute` waits
until the kernel is idle (SIGINT ignored) and routes SIGINT to the loop with ``loop.add_signal_handler``:
ipykernel then saves and restores that route around every cell. An interrupt stops the job (in-flight
messages finish, every task commits), and a running cell is interrupted as usual. When the job ends,
the route is removed and SIGINT is ignored again while idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

_RETRY_S = 0.25


def _idle_handlers() -> tuple[object, ...]:
    """SIGINT handlers that mean "the kernel is idle": ipykernel's SIG_IGN, or the no-op a removed asyncio
    route leaves behind when it was removed during a cell (ipykernel then restored it)."""
    noop = getattr(asyncio, "unix_events", None)
    return (signal.SIG_IGN, getattr(noop, "_sighandler_noop", signal.SIG_IGN))


class InterruptRoute:
    """Routes SIGINT to ``on_interrupt`` on ``loop`` (the kernel's loop, in the main thread)."""

    def __init__(self, loop: asyncio.AbstractEventLoop, on_interrupt: Callable[[], None]) -> None:
        self._loop = loop
        self._on_interrupt = on_interrupt
        self._installed = False
        self._closed = False
        self._retry: asyncio.Handle | None = None

    @staticmethod
    def available(loop: asyncio.AbstractEventLoop) -> bool:
        """True where a route can be made: the loop runs in the main thread, on a POSIX system."""
        return threading.current_thread() is threading.main_thread() and hasattr(loop, "add_signal_handler")

    @property
    def installed(self) -> bool:
        """True while SIGINT goes to ``on_interrupt``."""
        return self._installed

    def start(self) -> None:
        """Install the route as soon as the kernel is idle (checked a few times a second)."""
        self._retry = self._loop.call_soon(self._try_install)

    def _try_install(self) -> None:
        self._retry = None
        if self._closed or self._installed:
            return
        if signal.getsignal(signal.SIGINT) not in _idle_handlers():
            # A cell is running (ipykernel would restore SIG_IGN after it, undoing the route), or this is
            # not an ipykernel: look again later.
            self._retry = self._loop.call_later(_RETRY_S, self._try_install)
            return
        try:
            self._loop.add_signal_handler(signal.SIGINT, self._on_interrupt)
        except (NotImplementedError, RuntimeError, ValueError) as exc:
            log.debug("cannot route SIGINT to the job: %s", exc)
            return
        self._installed = True

    def close(self) -> None:
        """Remove the route (on the loop's thread); SIGINT goes back to what it was before."""
        self._closed = True
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None
        if not self._installed:
            return
        self._installed = False
        current = signal.getsignal(signal.SIGINT)
        with contextlib.suppress(Exception):
            self._loop.remove_signal_handler(signal.SIGINT)
        # remove_signal_handler leaves default_int_handler behind: while idle that would raise
        # KeyboardInterrupt inside the kernel's loop. Put back what ipykernel had: SIG_IGN when idle;
        # during a cell, ipykernel restores its own saved handler after the cell anyway.
        idle = current is not signal.default_int_handler
        signal.signal(signal.SIGINT, signal.SIG_IGN if idle else current)


__all__ = ["InterruptRoute"]
