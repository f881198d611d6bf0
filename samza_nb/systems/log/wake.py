"""Waking readers of the durable log when a partition is flushed, without busy-polling.

A flush rewrites the partition's flush mark file. In this process, :func:`notify_flushed` signals every
:class:`FlushWaiter` watching that mark (through the waiter's own pipe); across processes, the waiter
watches the mark files with inotify (``inotify_simple``), which reports every write to them. Either way
the waiter's file descriptors become readable, so a blocking wait is one ``select`` and an asyncio wait is
``loop.add_reader``: no timer, no polling. Where inotify is unavailable (not Linux), waits of other
processes' flushes fall back to looking again every :data:`FALLBACK_POLL_S` seconds, and so do waiters made
with ``remote_writers`` (the marks are on a shared mount that other machines write: inotify sees only this
machine's writes).

Use: construct the waiter (it watches from then on), check the condition, and wait only if it does not
hold yet: a flush between the check and the wait leaves the descriptor readable, so nothing is missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import select
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

log = logging.getLogger(__name__)

FALLBACK_POLL_S: Final = 0.05


@functools.cache
def _inotify() -> tuple[Any, int]:
    """inotify_simple's ``INotify`` and the flags a waiter watches, or ``(None, 0)`` where it is missing
    (imported when the first waiter is made: a process that never waits does not load it)."""
    try:  # pragma: no cover - depends on the platform
        from inotify_simple import INotify, flags

        return INotify, int(flags.MODIFY | flags.CLOSE_WRITE)
    except ImportError:  # pragma: no cover - not Linux, or not installed
        return None, 0


_local: dict[str, set[FlushWaiter]] = {}
_local_lock = threading.Lock()


def notify_flushed(mark: Path) -> None:
    """Signal this process's waiters on flush mark ``mark`` (other processes learn it from inotify)."""
    with _local_lock:
        waiters = list(_local.get(str(mark), ()))
    for waiter in waiters:
        waiter.signal()


class FlushWaiter:
    """Waits until one of the watched flush marks changes (in this process or another).

    ``wakeups`` counts the returns of :meth:`wait` / :meth:`wait_async` that were caused by a signal
    (not a timeout): a reader woken only by flushes does not poll.
    """

    def __init__(self, marks: Iterable[Path], *, remote_writers: bool = False) -> None:
        self._marks = [str(mark) for mark in marks]
        self._poll = remote_writers
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._read_fd, False)
        os.set_blocking(self._write_fd, False)
        self._inotify: Any = None
        self.wakeups = 0
        inotify_class, watch_flags = _inotify()
        if inotify_class is not None:
            try:
                inotify = inotify_class(nonblocking=True)
                for mark in self._marks:
                    inotify.add_watch(mark, watch_flags)
                self._inotify = inotify
            except OSError as exc:  # e.g. the watch limit: fall back to looking again now and then
                log.warning(
                    "durable log: inotify unavailable (%s); readers look for flushes every %s s",
                    exc,
                    FALLBACK_POLL_S,
                )
        with _local_lock:
            for mark in self._marks:
                _local.setdefault(mark, set()).add(self)

    @property
    def cross_process(self) -> bool:
        """True when flushes of other processes wake this waiter (inotify); else they are polled for."""
        return self._inotify is not None

    def signal(self) -> None:
        """Wake the waiter (from any thread)."""
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._write_fd, b"\0")

    def _fds(self) -> list[int]:
        fds = [self._read_fd]
        if self._inotify is not None:
            fds.append(self._inotify.fileno())
        return fds

    def _drain(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            while os.read(self._read_fd, 4096):
                pass
        if self._inotify is not None:
            with contextlib.suppress(BlockingIOError, OSError):
                self._inotify.read(timeout=0)

    def _cap(self, timeout: float) -> float:
        if self._inotify is not None and not self._poll:
            return timeout
        return min(timeout, FALLBACK_POLL_S)

    def wait(self, timeout: float) -> bool:
        """Block until a watched mark changes (True) or ``timeout`` seconds pass (False)."""
        ready, _, _ = select.select(self._fds(), [], [], max(self._cap(timeout), 0.0))
        self._drain()
        if ready:
            self.wakeups += 1
        return bool(ready)

    async def wait_async(self, timeout: float) -> bool:
        """:meth:`wait` on the running event loop (the loop keeps running meanwhile)."""
        loop = asyncio.get_running_loop()
        woken = loop.create_future()

        def wake() -> None:
            if not woken.done():
                woken.set_result(True)

        fds = self._fds()
        for fd in fds:
            loop.add_reader(fd, wake)
        try:
            await asyncio.wait_for(woken, max(self._cap(timeout), 0.0))
            self.wakeups += 1
            return True
        except TimeoutError:
            return False
        finally:
            for fd in fds:
                loop.remove_reader(fd)
            self._drain()

    def close(self) -> None:
        """Stop watching (idempotent)."""
        with _local_lock:
            for mark in self._marks:
                waiters = _local.get(mark)
                if waiters is not None:
                    waiters.discard(self)
                    if not waiters:
                        del _local[mark]
        if self._read_fd >= 0:
            os.close(self._read_fd)
            os.close(self._write_fd)
            self._read_fd = self._write_fd = -1
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None


__all__ = ["FALLBACK_POLL_S", "FlushWaiter", "notify_flushed"]
