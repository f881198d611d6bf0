"""What a job's code prints goes to the cell that started the job, never to whichever cell runs meanwhile.

A job runs on threads of its own while the kernel runs other cells, and ipykernel sends what any thread
writes to ``sys.stdout`` to the cell running *now*: a task's ``print()`` would land in an unrelated cell.
So while a run routes its output, ``sys.stdout`` and ``sys.stderr`` are wrapped (:class:`RoutedStream`):
a write made in the job's context (the job's thread, the tasks it runs on the job's loop, and the threads
that inherit its context variables: ``asyncio.to_thread``, the container's task threads) goes to the run's
:class:`CellOutput`; any other write goes to the stream as before. Nothing is added per message: only a
write looks up where it goes.

A CellOutput is an output area shown in the run cell when the run starts (empty: nothing shows until
something is printed) and updated by its display id, which front-ends honour wherever the display is, also
after its cell ended. It keeps the last :data:`MAX_CHARS` characters (saying how many lines it left out)
and is updated at most every ``refresh_s``; :meth:`CellOutput.close` shows the rest when the run ends.
"""

from __future__ import annotations

import contextvars
import html
import threading
from collections.abc import Callable, Iterable
from typing import Any, TextIO

MAX_CHARS = 20_000
"""How much printed text a run's output area keeps (the latest); older text is counted, not shown."""

_SINK: contextvars.ContextVar[CellOutput | None] = contextvars.ContextVar(
    "samza_nb_cell_output", default=None
)

Publish = Callable[[dict[str, str]], None]
"""Shows a mime bundle in the output area (the first call displays it, later ones update it)."""


class CellOutput:
    """The output area of one run: ``write(stream, text)`` from any thread; shown through ``publish``
    (default: an IPython display in the current cell, updated by its display id)."""

    def __init__(self, refresh_s: float = 0.2, publish: Publish | None = None) -> None:
        self.refresh_s = refresh_s
        self._publish = publish if publish is not None else _display_publisher()
        self._chunks: list[list[str]] = []  # [stream name, text], consecutive writes of a stream merged
        self._chars = 0
        self._dropped_lines = 0
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._shown: dict[str, str] | None = None
        self._closed = False
        self._publish(self._bundle())

    def write(self, stream: str, text: str) -> None:
        """Add ``text`` written to ``stream`` (``stdout`` or ``stderr``); shown within ``refresh_s``."""
        if not text:
            return
        with self._lock:
            chunks = self._chunks
            if chunks and chunks[-1][0] == stream:
                chunks[-1][1] += text
            else:
                chunks.append([stream, text])
            self._chars += len(text)
            self._trim()
            if self._timer is None and not self._closed:
                self._timer = threading.Timer(self.refresh_s, self.flush)
                self._timer.daemon = True
                self._timer.start()
        if self._closed:  # a late write (a task thread outliving the run): shown at once
            self.flush()

    @property
    def text(self) -> str:
        """Everything kept, as written (stdout and stderr interleaved)."""
        with self._lock:
            return "".join(text for _, text in self._chunks)

    def flush(self, *, again: bool = False) -> None:
        """Show what was written since the last update (nothing when nothing changed, unless ``again``)."""
        with self._lock:
            self._timer = None
            bundle = self._bundle()
            if bundle == self._shown and not (again and self._chunks):
                return
            self._shown = bundle
        self._publish(bundle)

    def close(self) -> None:
        """The run ended: show everything now, once more (a front-end that missed an update while no cell
        ran, such as nbclient, gets it from the cell running now)."""
        with self._lock:
            self._closed = True
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()
        self.flush(again=True)

    def _trim(self) -> None:
        chunks = self._chunks
        while self._chars > MAX_CHARS and chunks:
            text = chunks[0][1]
            excess = self._chars - MAX_CHARS
            if excess >= len(text):
                chunks.pop(0)
                cut = text
            else:
                end = text.find("\n", excess)  # cut whole lines
                cut = text if end < 0 else text[: end + 1]
                if len(cut) == len(text):
                    chunks.pop(0)
                else:
                    chunks[0][1] = text[len(cut) :]
            self._chars -= len(cut)
            self._dropped_lines += max(cut.count("\n"), 1)

    def _bundle(self) -> dict[str, str]:
        if not self._chunks:
            return {"text/plain": "", "text/html": ""}
        note = (
            f"… {self._dropped_lines:,} earlier line{'s' if self._dropped_lines != 1 else ''} not shown\n"
            if self._dropped_lines
            else ""
        )
        plain = note + "".join(text for _, text in self._chunks)
        spans = "".join(
            html.escape(text)
            if stream == "stdout"
            else f"<span style='background:#fdd'>{html.escape(text)}</span>"
            for stream, text in self._chunks
        )
        markup = f"<pre class='samza-output' style='margin:0'>{html.escape(note)}{spans}</pre>"
        return {"text/plain": plain, "text/html": markup}


def _display_publisher() -> Publish:
    """Display in the current cell, then update that display by its id."""
    from IPython import display as ipython_display

    show: Any = ipython_display.display
    handle: Any = None

    def publish(bundle: dict[str, str]) -> None:
        nonlocal handle
        if handle is None:
            handle = show(bundle, raw=True, display_id=True)
        else:
            handle.update(bundle, raw=True)

    return publish


class RoutedStream:
    """``sys.stdout`` or ``sys.stderr`` (``name``) wrapped: writes in a run's context go to its
    CellOutput, the others to ``stream``; everything else is the stream's."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self.stream = stream
        self.name = name

    def write(self, text: str) -> int:
        """Write ``text`` where it belongs (see the class)."""
        sink = _SINK.get()
        if sink is None:
            return self.stream.write(text)
        sink.write(self.name, text)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        """Write each of ``lines``."""
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        """Flush the stream (a run's output area shows writes on its own schedule)."""
        if _SINK.get() is None:
            self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        if name == "stream":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.stream, name)


class _Routing:
    """Wraps ``sys.stdout``/``sys.stderr`` while any run routes its output; unwraps after the last.

    A wrapper is never freed, only put aside (and put back by the next run over the same stream):
    ``print()`` and ``sys.stdout.write`` in C hold a *borrowed* reference to ``sys.stdout`` while they
    call its ``write``, so a run ending on its own thread meanwhile (unwrapping, dropping the wrapper's
    last reference) would leave them writing through freed memory: the kernel dies of a segfault
    (CPython issue 130163, fixed only in later releases). Seen when an interrupt cancels a job: the cell
    prints "cancelling" while the job's thread ends the routing.
    """

    lock = threading.Lock()
    users = 0
    wrapped: list[RoutedStream] = []
    kept: dict[tuple[str, int], RoutedStream] = {}
    """Every wrapper ever made, by stream name and the wrapped stream's id (the wrapper keeps the stream
    alive, so its id stays its own); one per stream a run wrapped, so a handful in a kernel's life."""

    @classmethod
    def acquire(cls) -> None:
        import sys

        with cls.lock:
            cls.users += 1
            if cls.users > 1:
                return
            cls.wrapped = []
            for name in ("stdout", "stderr"):
                current = getattr(sys, name)
                if current is not None and not isinstance(current, RoutedStream):
                    routed = cls.kept.get((name, id(current)))
                    if routed is None:
                        routed = RoutedStream(current, name)
                        cls.kept[(name, id(current))] = routed
                    setattr(sys, name, routed)
                    cls.wrapped.append(routed)

    @classmethod
    def release(cls) -> None:
        import sys

        with cls.lock:
            cls.users -= 1
            if cls.users > 0:
                return
            for routed in cls.wrapped:
                if getattr(sys, routed.name) is routed:  # left alone when someone replaced it since
                    setattr(sys, routed.name, routed.stream)
            cls.wrapped = []  # the wrappers live on in ``kept``: a print() may still be inside one


def route_here(output: CellOutput) -> Callable[[], None]:
    """From now on, what the calling context (and every task and thread that inherits it) writes to
    ``sys.stdout``/``sys.stderr`` goes to ``output``; returns the function that ends the routing (call it
    once, from any thread)."""
    _Routing.acquire()
    _SINK.set(output)
    once = threading.Lock()

    def end() -> None:
        if once.acquire(blocking=False):  # the first call only
            _Routing.release()

    return end


__all__ = ["MAX_CHARS", "CellOutput", "RoutedStream", "route_here"]
