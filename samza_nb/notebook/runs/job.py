"""One run of a notebook job: a container (or a job's coordinator) on its own thread and event loop.

What runs is a :class:`~.runnable.RunnableJob`: a container in the kernel's process, or the coordinator of a
job of several containers (:mod:`.processes_job`, :mod:`.spark_job`), watched by a
:class:`~.runnable.RunMonitor` that makes JobViews. The job always runs on a new event loop in a daemon
thread of its own, so it keeps processing while the kernel runs other cells (a ``time.sleep`` cell, a
CPU-bound cell), a new cell starts at once, and an interrupt (which lands in the kernel's main thread) never
reaches inside the container: only ``stop()`` stops it, gracefully. A cell waits for a run with
:meth:`JobRun.wait` (blocking) or :meth:`JobRun.wait_async` (an awaiting cell, which lets the kernel handle
widget messages meanwhile); either turns the first interrupt into a graceful stop, the second into a cancel,
and gives up waiting after the third.

The outcome (a :class:`~samza_nb.observe.states.RunOutcome`: finished, stopped, timed out, interrupted,
cancelled, failed) and the failure are kept, and the
monitor's last view describes the end.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from samza_nb.container import event_loop
from samza_nb.notebook.errors import NotebookError
from samza_nb.notebook.runs.cell_output import CellOutput, route_here
from samza_nb.notebook.runs.runnable import RunMonitor, RunnableJob
from samza_nb.observe.states import RunOutcome

if TYPE_CHECKING:
    from samza_nb.notebook.display.views import JobView

OWN_THREAD = "on its own thread"

SWITCH_INTERVAL_S = 0.001
"""While a job runs on its thread, the interpreter hands the GIL to a waiting thread after this long
(CPython's default is 5 ms). A Jupyter cell passes through several of the kernel's threads (shell channel,
main, IOPub), each waiting for the GIL a busy job holds: at 5 ms a new cell took ~250 ms to start, at
1 ms ~50 ms. Only a thread that waits forces a switch, so an idle kernel costs the job nothing."""


class _Interpreter:
    """Lowers ``sys.getswitchinterval()`` while any job runs on its thread; restores it after the last."""

    _lock = threading.Lock()
    _running = 0
    _saved: float | None = None

    @classmethod
    def job_started(cls) -> None:
        with cls._lock:
            cls._running += 1
            if cls._running == 1:
                cls._saved = sys.getswitchinterval()
                sys.setswitchinterval(min(cls._saved, SWITCH_INTERVAL_S))

    @classmethod
    def job_ended(cls) -> None:
        with cls._lock:
            cls._running -= 1
            if cls._running == 0 and cls._saved is not None:
                sys.setswitchinterval(cls._saved)
                cls._saved = None


log = logging.getLogger(__name__)

DoneCallback = Callable[["JobRun"], None]


def one_line(exc: BaseException) -> str:
    """``TypeName: message`` on one line."""
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class JobRun:
    """A run of ``job`` (a container, or a job's container processes) with its monitor, on a thread of its
    own: create it with :meth:`on_thread`.

    ``stop()`` asks for a graceful stop from any thread (in-flight messages finish, every task commits);
    ``timeout_s`` stops it the same way after that many seconds. ``done`` turns true once the job
    stopped and the monitor took its last view; then ``outcome``, ``error`` and ``final_view`` are set and
    ``on_done`` callbacks have run (on the job's thread). ``failure_reported`` is set by whoever showed a
    failure to the user (so it is shown once). ``output`` (when given) receives what the job's code writes
    to ``sys.stdout``/``sys.stderr`` (:mod:`.cell_output`); it shows the rest before ``done`` turns true.
    ``run_seconds`` is how long
    ``job.run()`` took, ``run_cpu_seconds`` the CPU time the process (every thread) used meanwhile.
    ``knobs`` are the live knobs' values in force as the last ``set`` through the notebook's job handle
    returned them (``%samza_set``, the dashboard's slider; empty before the first), for the dashboard.
    """

    def __init__(
        self,
        job: RunnableJob,
        monitor: RunMonitor,
        mode: str,
        timeout_s: float | None,
        output: CellOutput | None = None,
    ) -> None:
        self.job = job
        self.output = output
        self.monitor = monitor
        self.mode = mode
        self.timeout_s = timeout_s
        self.outcome: RunOutcome | None = None
        self.error: BaseException | None = None
        self.final_view: JobView | None = None
        self.run_seconds: float | None = None
        self.run_cpu_seconds: float | None = None
        self.on_done: list[DoneCallback] = []
        self.failure_reported = False
        self.knobs: Mapping[str, str] = {}
        self.started_at = time.monotonic()
        self._stop_reason: RunOutcome | None = None
        self._finishing = False
        self._done = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._thread: threading.Thread | None = None
        self._end_routing: Callable[[], None] | None = None

    # -- starting ---------------------------------------------------------------------------------------
    @classmethod
    def on_thread(
        cls,
        job: RunnableJob,
        monitor: RunMonitor,
        timeout_s: float | None = None,
        output: CellOutput | None = None,
    ) -> JobRun:
        """Run on a new event loop in a daemon thread; returns once the thread started. ``output``: where
        what the job prints goes (every thread of the job: see :mod:`.cell_output`)."""
        run = cls(job, monitor, OWN_THREAD, timeout_s, output)
        started = threading.Event()

        def target() -> None:
            if output is not None:
                run._end_routing = route_here(output)  # this thread's context: the loop's tasks inherit it

            async def main() -> None:
                run._loop = asyncio.get_running_loop()
                run._task = asyncio.current_task()
                started.set()
                await run._main()

            _Interpreter.job_started()
            try:
                event_loop.run(main())
            except BaseException as exc:  # the loop itself failed (before or around the run)
                if not run.done:
                    run.error = run.error or exc
                    run.outcome = run.outcome or RunOutcome.FAILED
                    run.final_view = run.final_view or run._ended_view(run.outcome, one_line(exc))
            finally:
                _Interpreter.job_ended()
                run._end()  # whatever happened, the run ends: nobody waits for ever
                started.set()

        run._thread = threading.Thread(target=target, name=f"samza-nb job {monitor.view.job}", daemon=True)
        run._thread.start()
        started.wait()
        return run

    async def _main(self) -> None:
        timer = None
        error: BaseException | None = None
        started, started_cpu = time.perf_counter(), time.process_time()
        try:
            self.monitor.start()
            if self.timeout_s is not None:
                timer = asyncio.get_running_loop().call_later(self.timeout_s, self.stop, RunOutcome.TIMED_OUT)
            await self.job.run()
        except asyncio.CancelledError as exc:
            error = exc
        except Exception as exc:
            error = exc
        finally:
            self._finishing = True  # from here on, cancel() cannot cut the last view short
            self.run_seconds = time.perf_counter() - started
            self.run_cpu_seconds = time.process_time() - started_cpu
            if timer is not None:
                timer.cancel()
        if error is None:
            outcome = self._stop_reason or RunOutcome.FINISHED
        elif isinstance(error, asyncio.CancelledError):
            outcome = RunOutcome.CANCELLED
        else:
            outcome = RunOutcome.FAILED
        self.error = error
        self.outcome = outcome
        detail = one_line(error) if error is not None and outcome is RunOutcome.FAILED else None
        try:
            self.final_view = await self.monitor.finish(outcome, detail)
        except BaseException:  # the last view failed: the latest one, marked as the end, will do
            log.exception("the last view of job %r failed", self.monitor.view.job)
            self.final_view = self._ended_view(outcome, detail)
        finally:
            self._end()

    def _ended_view(self, outcome: RunOutcome, detail: str | None) -> JobView:
        return dataclasses.replace(
            self.monitor.view, state=outcome, done=True, error=detail or self.monitor.view.error
        )

    def _end(self) -> None:
        """Mark the run done (once) and run the ``on_done`` callbacks."""
        if self._done.is_set():
            return
        if self.output is not None:
            try:
                self.output.close()  # what the job printed shows before anyone hears it ended
            except Exception:
                log.exception("showing the output of job %r failed", self.monitor.view.job)
        if self._end_routing is not None:
            self._end_routing()
        self._done.set()
        for callback in self.on_done:
            try:
                callback(self)
            except Exception:
                log.exception("an on_done callback of job %r failed", self.view.job)

    # -- control ----------------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """True once the run ended and its last view was taken."""
        return self._done.is_set()

    @property
    def view(self) -> JobView:
        """The latest view of the job (the final one once done)."""
        return self.final_view or self.monitor.view

    @property
    def stopping(self) -> bool:
        """True once a stop was asked for (``stop``, the Stop button, an interrupt, the timeout)."""
        return self._stop_reason is not None

    def stop(self, reason: RunOutcome = RunOutcome.STOPPED) -> None:
        """Ask for a graceful stop (from any thread); ``reason`` (a RunOutcome or its word) becomes the
        outcome. Idempotent."""
        if self._stop_reason is None and not self.done:
            self._stop_reason = RunOutcome(reason)
        self.job.shutdown()

    def cancel(self) -> None:
        """Cancel the container's task: no final commit (a restart resumes from the last checkpoint).
        Nothing once the job itself ended (its last view is being taken)."""
        loop, task = self._loop, self._task
        if self._finishing:
            return
        if loop is not None and task is not None and not loop.is_closed():
            loop.call_soon_threadsafe(task.cancel)

    def wait(
        self,
        tick: Callable[[], None] | None = None,
        tick_s: float = 0.1,
        *,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        """Block the calling thread until the run is done, calling ``tick`` every ``tick_s`` meanwhile.

        An interrupt (KeyboardInterrupt) stops the job gracefully; a second one cancels it; a third stops
        waiting and raises NotebookError (the thread is left behind). ``notify`` is told each step.
        """
        interrupts = 0
        while True:
            try:
                while not self._done.wait(tick_s):
                    if tick is not None:
                        tick()
                return
            except KeyboardInterrupt:
                interrupts += 1
                self._interrupted(interrupts, notify)

    def _interrupted(self, interrupts: int, notify: Callable[[str], None] | None) -> None:
        job = self.view.job
        if interrupts == 1:
            self.stop(RunOutcome.INTERRUPTED)
            if notify is not None:
                notify(
                    f"interrupted: stopping job {job!r} gracefully (in-flight messages finish, every task "
                    "commits); interrupt again to cancel it"
                )
        elif interrupts == 2:
            self.cancel()
            if notify is not None:
                notify(
                    f"interrupted again: cancelling job {job!r} (no final commit); once more to stop waiting"
                )
        else:
            raise NotebookError(
                f"job {self.view.job!r} did not stop (a task may be blocked in process()); it is left "
                "running on its thread"
            ) from None

    async def wait_async(
        self,
        timeout: float | None = None,
        *,
        interruptible: bool = False,
        tick: Callable[[], None] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> bool:
        """Wait (in an ``async`` cell) until the run is done; False when ``timeout`` seconds passed.

        The kernel's loop keeps running meanwhile (widget messages such as the Stop button are handled).
        With ``interruptible``, being cancelled (ipykernel cancels an awaiting cell on the interrupt
        button) is an interrupt as in :meth:`wait`: the first stops the job gracefully and the wait goes
        on; later interrupts (SIGINT, routed here while waiting) cancel the job, then give up. ``tick`` is
        called about every 20 ms meanwhile.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        interrupts = 0
        restore: Callable[[], None] | None = None
        try:
            while not self.done:
                if deadline is not None and time.monotonic() >= deadline:
                    return False
                if tick is not None:
                    tick()
                try:
                    await asyncio.sleep(0.02)
                except asyncio.CancelledError:
                    task = asyncio.current_task()
                    if not interruptible or task is None:
                        raise
                    task.uncancel()
                    interrupts += 1
                    if restore is None:
                        restore = self._route_interrupts_here(task)
                    self._interrupted(interrupts, notify)
            return True
        finally:
            if restore is not None:
                restore()

    @staticmethod
    def _route_interrupts_here(task: asyncio.Task[object]) -> Callable[[], None]:
        """While waiting after a first interrupt, further SIGINTs cancel ``task`` again (ipykernel only
        turns the first into a cancel); returns how to put the previous handler back."""
        if threading.current_thread() is not threading.main_thread():
            return lambda: None
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGINT)

        def handler(_signum: int, _frame: object) -> None:
            loop.call_soon_threadsafe(task.cancel)

        signal.signal(signal.SIGINT, handler)

        def restore() -> None:
            signal.signal(signal.SIGINT, previous)

        return restore

    def join(self, timeout: float) -> bool:
        """Block until done (a run on its own thread) for up to ``timeout`` seconds; True when done."""
        return self._done.wait(timeout)


__all__ = ["OWN_THREAD", "SWITCH_INTERVAL_S", "JobRun", "one_line"]
