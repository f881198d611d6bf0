"""Live samples of a running container for the dashboard: messages flowing in and out of its tasks, and
its stores' contents as of their latest commit.

Both are built by the :class:`~samza_nb.notebook.display.monitor.Monitor` and run on the job's loop thread:

- :class:`MessageSampler` listens to the observe bus's *sampled* messages (:class:`MessageTaken`,
  :class:`MessageSent`: about one per slice of work, never one per message) and keeps the last few per task
  and direction as :class:`MessageView` rows, their key and value as short text;
- :class:`StoreSnapshots` listens to commits and then reads each store's committed contents (the first
  rows and the count, one DuckDB query per store, on a worker thread: the run loop never waits for it), at
  most once per ``min_interval_s`` and never while its previous reading is still running.

Reading either (``views()``) costs nothing: the tuples are rebuilt only when something new arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import reprlib
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from samza_nb.config.stores import configured_store_names
from samza_nb.notebook.display.views import MessageView, StoreTableView
from samza_nb.observe import events as ev
from samza_nb.storage.duckdb.job_files import quote_ident

if TYPE_CHECKING:
    from samza_nb.container.container import SamzaContainer

log = logging.getLogger(__name__)

SHORT = 60
"""The most characters a sampled key, value or store cell shows (longer ones end in …)."""

_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 2 * SHORT  # bounds the work; the cut to SHORT ends in …
_repr.maxlist = _repr.maxtuple = _repr.maxset = _repr.maxdict = 8
_repr.maxlevel = 3


def short(value: object, limit: int = SHORT) -> str:
    """``repr(value)`` in at most ``limit`` characters (bounded work for a huge value too), cut with …."""
    try:
        text = _repr.repr(value)
    except Exception as exc:  # a message's own __repr__ may fail: say so, never fail the dashboard
        text = f"<{type(value).__name__}: repr failed: {type(exc).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_text(value: object, limit: int = SHORT) -> str:
    """``str(value)`` of a store cell in at most ``limit`` characters, cut with …; None is —."""
    if value is None:
        return "—"
    text = value if isinstance(value, str) else short(value, limit)
    return text if len(text) <= limit else text[: limit - 1] + "…"


SLOW_READING_FACTOR = 10.0
"""A reading of the stores that took T seconds waits at least this many times T before the next one."""

SinceStart = Callable[[float], float]
"""Seconds since the job started, of a container clock time in ms."""


class MessageSampler:
    """The last ``keep`` sampled messages of each task in each direction, newest first; of a burst it
    keeps one per ``spacing_ms`` per task and direction, so the rows stay readable while a job runs."""

    def __init__(
        self, container: SamzaContainer, since_start: SinceStart, *, keep: int = 10, spacing_ms: float = 100.0
    ) -> None:
        self._since_start = since_start
        self._keep = keep
        self._spacing_ms = spacing_ms
        self._rows: dict[tuple[str, str], deque[MessageView]] = {}
        self._last_ms: dict[tuple[str, str], float] = {}
        self._views: tuple[MessageView, ...] = ()
        self._dirty = False
        self.unsubscribe = container.bus.subscribe(self._on_message, [ev.MessageTaken, ev.MessageSent])

    def _on_message(self, event: ev.Event) -> None:
        if isinstance(event, ev.MessageTaken):
            key: tuple[str, str] = (event.task, "in")
            where = f"{event.ssp}@{event.offset}"
        elif isinstance(event, ev.MessageSent):
            key = (event.task, "out")
            where = f"{event.system_stream.system}.{event.system_stream.stream}"
        else:
            return
        last = self._last_ms.get(key)
        if last is not None and event.at_ms - last < self._spacing_ms:
            return
        self._last_ms[key] = event.at_ms
        rows = self._rows.get(key)
        if rows is None:
            rows = self._rows[key] = deque(maxlen=self._keep)
        rows.append(
            MessageView(
                self._since_start(event.at_ms),
                event.task,
                key[1],
                where,
                short(event.key),
                short(event.message),
            )
        )
        self._dirty = True

    def views(self) -> tuple[MessageView, ...]:
        """The kept messages, newest first."""
        if self._dirty:
            self._dirty = False
            rows = [row for kept in self._rows.values() for row in kept]
            rows.sort(key=lambda row: row.at_s, reverse=True)
            self._views = tuple(rows)
        return self._views


class StoreSnapshots:
    """Each store's committed contents (its first ``rows`` rows and its row count), read after commits.

    A commit marks the stores due; a reading of every store starts on the job's loop unless one is
    running or the last started less than ``min_interval_s`` ago (then it starts when that time is up;
    after a slow reading, ``SLOW_READING_FACTOR`` times its duration, so reading big stores takes a small
    share of the machine). Each store is one query on a worker thread (``container.query_store``).
    """

    def __init__(
        self,
        container: SamzaContainer,
        since_start: SinceStart,
        *,
        rows: int = 10,
        min_interval_s: float = 1.0,
    ) -> None:
        self._container = container
        self._since_start = since_start
        self._limit = rows
        self._min_interval_s = min_interval_s
        self.names: tuple[str, ...] = tuple(configured_store_names(container.config))
        self._tables: dict[str, StoreTableView] = {}
        self._views: tuple[StoreTableView, ...] = ()
        self._due_at_ms: float | None = None  # the container time of the newest commit not read yet
        self._reading: asyncio.Task[None] | None = None
        self._later: asyncio.TimerHandle | None = None
        self._last_start = -float("inf")
        self._gap_s = min_interval_s  # between reading starts: grows with a slow reading (big stores)
        self._finished = False
        self.errors: dict[str, str] = {}
        self.unsubscribe: Callable[[], None] = (
            container.bus.subscribe(self._on_commit, [ev.Committed]) if self.names else _nothing
        )

    def views(self) -> tuple[StoreTableView, ...]:
        """The latest reading of each store, in the order they are configured."""
        return self._views

    def _on_commit(self, event: ev.Event) -> None:
        self._due_at_ms = event.at_ms
        self._schedule()

    def _schedule(self) -> None:
        if self._due_at_ms is None or self._later is not None or self._finished:
            return
        if self._reading is not None and not self._reading.done():
            return  # it reads again when it is done
        loop = asyncio.get_running_loop()
        wait = self._last_start + self._gap_s - time.monotonic()
        if wait > 0:
            self._later = loop.call_later(wait, self._start_later)
            return
        self._start(loop)

    def _start_later(self) -> None:
        self._later = None
        self._schedule()

    def _start(self, loop: asyncio.AbstractEventLoop) -> None:
        at_ms, self._due_at_ms = self._due_at_ms, None
        assert at_ms is not None
        self._last_start = time.monotonic()
        self._reading = loop.create_task(self._read_all(at_ms))
        self._reading.add_done_callback(self._after_reading)

    def _after_reading(self, task: asyncio.Task[None]) -> None:
        took = time.monotonic() - self._last_start
        self._gap_s = max(self._min_interval_s, SLOW_READING_FACTOR * took)
        if not task.cancelled() and task.exception() is not None:
            log.debug("reading the stores failed", exc_info=task.exception())
        if not asyncio.get_running_loop().is_closed():
            self._schedule()

    async def _read_all(self, at_ms: float) -> None:
        at_s = self._since_start(at_ms)
        for store in self.names:
            try:
                table = await self._read(store, at_s)
            except Exception as exc:  # the dashboard shows the last good reading; the error is kept
                self.errors[store] = f"{type(exc).__name__}: {exc}"
                continue
            self.errors.pop(store, None)
            self._tables[store] = table
        self._views = tuple(self._tables[name] for name in self.names if name in self._tables)

    async def _read(self, store: str, at_s: float) -> StoreTableView:
        sql = (
            f"SELECT key, value, partition, count(*) OVER () AS _samza_total FROM {quote_ident(store)} "
            f"ORDER BY partition, key LIMIT {int(self._limit)}"
        )
        result = await self._container.query_store(store, sql)
        total = int(result.rows[0][-1]) if result.rows else 0
        rows = tuple(tuple(short_text(cell) for cell in row[:-1]) for row in result.rows)
        return StoreTableView(store, at_s, tuple(result.columns[:-1]), rows, total)

    async def finish(self, timeout_s: float = 2.0) -> None:
        """The run ended: read the stores once more if a commit came since the last reading (the final
        commit), waiting for a reading in progress; gives up after ``timeout_s``."""
        self.unsubscribe()
        self._finished = True
        if self._later is not None:
            self._later.cancel()
            self._later = None
        with contextlib.suppress(Exception):
            async with asyncio.timeout(timeout_s):
                if self._reading is not None and not self._reading.done():
                    await asyncio.shield(self._reading)
                if self._due_at_ms is not None:
                    at_ms, self._due_at_ms = self._due_at_ms, None
                    await self._read_all(at_ms)


def _nothing() -> None:
    """Unsubscribes nothing (a job without stores does not listen to commits)."""


class LiveSamples:
    """The message samples and store snapshots of one container, for its monitor's JobViews."""

    def __init__(self, container: SamzaContainer, since_start: SinceStart) -> None:
        self.messages = MessageSampler(container, since_start)
        self.stores = StoreSnapshots(container, since_start)

    def fields(self) -> dict[str, Any]:
        """The JobView fields they fill: ``messages`` and ``stores``."""
        return {"messages": self.messages.views(), "stores": self.stores.views()}

    async def finish(self) -> None:
        """The run ended: stop listening, after a last reading of the stores."""
        self.messages.unsubscribe()
        await self.stores.finish()


__all__ = [
    "SHORT",
    "SLOW_READING_FACTOR",
    "LiveSamples",
    "MessageSampler",
    "StoreSnapshots",
    "short",
    "short_text",
]
