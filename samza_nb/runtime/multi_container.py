"""``samza-nb run`` with ``job.container.count`` = N > 1: a job coordinator in this process and N container
processes (``python -m samza_nb container``) on this machine.

One progress bar counts every container's messages (from the coordinator's status); ``--max-messages``
counts them all and then stops every container; Ctrl-C or SIGTERM stops them gracefully (SIGTERM to each:
each commits), a second signal kills them. A container that fails stops the job: the others are stopped
gracefully and the run exits non-zero with one line naming the failed container.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from samza_nb.config import Config
from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.errors import ConfigError, SamzaError
from samza_nb.runtime.console import (
    EXIT_CONFIG,
    EXIT_OK,
    PROG,
    PROGRESS_INTERVAL_S,
    install_signal_handlers,
    isatty,
    progress_bar,
    report_error,
    say,
    summary,
)
from samza_nb.runtime.container_cli import ID_ENV, URL_ENV
from samza_nb.runtime.local import read_checkpoints


@dataclass
class _Child:
    """One container process and what it said last on stderr."""

    container_id: str
    process: asyncio.subprocess.Process
    last_line: str = ""
    relay: asyncio.Task[None] | None = None
    exit_status: int | None = None


@dataclass
class _Run:
    """The state of a multi-container run the signal handler and the monitor share."""

    children: list[_Child] = field(default_factory=list)
    signals: int = 0
    stopping: str | None = None
    forced: int | None = None
    failed: _Child | None = None


def run_containers(config: Config, args: argparse.Namespace) -> int:
    """Run ``config``'s job as ``job.container.count`` processes (see the module); the exit status."""
    run = MultiContainerRun(config, args.max_messages, args.timeout, args.no_progress)
    run.verbose = args.verbose
    return asyncio.run(run.run())


class MultiContainerRun:
    """The coordinator and its container processes, from start to the summary line."""

    def __init__(
        self, config: Config, max_messages: int | None, timeout: float | None, no_progress: bool
    ) -> None:
        self.config = config
        self.max_messages = max_messages
        self.timeout = timeout
        self.no_progress = no_progress
        self.coordinator = JobCoordinator(config)
        self.state = _Run()
        self.processed = 0
        self.verbose = False

    async def run(self) -> int:
        """Start the coordinator and the containers, watch them, stop them, report."""
        started = time.monotonic()
        try:
            await self.coordinator.start()
        except BaseException as exc:
            await self.coordinator.stop()
            if isinstance(exc, Exception):
                return report_error(exc, self.verbose)
            raise
        bar = progress_bar(self.config.job_name(), enabled=not self.no_progress and isatty(sys.stderr))
        tell: Callable[[str], None] = (
            say if bar is None else (lambda text: bar.write(f"{PROG}: {text}", file=sys.stderr))
        )
        restore = install_signal_handlers(asyncio.get_running_loop(), lambda s: self._on_signal(s, tell))
        try:
            await self._spawn(tell)
            await self._watch(bar, tell, started)
        finally:
            restore()
            await self._reap()
            if bar is not None:
                bar.update(self.processed - bar.n)
                bar.close()
            await self.coordinator.stop()
        return await self._report(time.monotonic() - started)

    async def _spawn(self, tell: Callable[[str], None]) -> None:
        env = dict(os.environ)
        env[URL_ENV] = self.coordinator.url
        cwd = os.getcwd()
        env["PYTHONPATH"] = os.pathsep.join(p for p in (cwd, env.get("PYTHONPATH", "")) if p)
        for cid in sorted(self.coordinator.job_model.containers, key=_numeric):
            env[ID_ENV] = cid
            process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "samza_nb",
                "container",
                env=dict(env),
                stdin=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.PIPE,
                start_new_session=True,  # Ctrl-C reaches this process only; it forwards SIGTERM
            )
            child = _Child(cid, process)
            child.relay = asyncio.create_task(_relay(child, tell))
            self.state.children.append(child)

    async def _watch(self, bar: Any, tell: Callable[[str], None], started: float) -> None:
        """Until every container exited: move the bar, apply the limits, stop all when one fails."""
        state = self.state
        waits = {asyncio.ensure_future(c.process.wait()): c for c in state.children}
        while waits:
            done, _ = await asyncio.wait(waits, timeout=PROGRESS_INTERVAL_S)
            for future in done:
                child = waits.pop(future)
                child.exit_status = future.result()
                if child.exit_status != 0 and state.failed is None and state.forced is None:
                    state.failed = child
                    self._stop_all(f"container {child.container_id} failed")
            self.processed = self.coordinator.job_status().processed
            if bar is not None and self.processed != bar.n:
                bar.update(self.processed - bar.n)
            if self.max_messages is not None and self.processed >= self.max_messages:
                self._stop_all(f"stopped after --max-messages {self.max_messages}")
            if self.timeout is not None and time.monotonic() - started > self.timeout:
                self._stop_all(f"stopped after --timeout {self.timeout:g} s (run limit reached)")

    def _stop_all(self, why: str, signum: int = signal.SIGTERM) -> None:
        if self.state.stopping is not None and signum == signal.SIGTERM:
            return
        self.state.stopping = self.state.stopping or why
        for child in self.state.children:
            if child.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signum)

    def _on_signal(self, signum: int, tell: Callable[[str], None]) -> None:
        state = self.state
        state.signals += 1
        name = signal.Signals(signum).name
        if state.signals == 1:
            tell(f"{name}: stopping every container gracefully (each commits); press Ctrl-C again to force")
            self._stop_all("interrupted; stopped gracefully")
        else:
            tell(f"{name}: killing the containers (no commit)")
            state.forced = 128 + signum
            self._stop_all("forced", signal.SIGKILL)

    async def _reap(self) -> None:
        """Kill what still runs (after an error here) and wait for the stderr relays."""
        for child in self.state.children:
            if child.process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.kill()
                await child.process.wait()
            if child.relay is not None:
                await child.relay

    async def _report(self, elapsed: float) -> int:
        state = self.state
        job = self.config.job_name()
        if state.forced is not None:
            say(f"forced stop after {self.processed} messages; offsets since the last commit are not saved")
            return state.forced
        failed = state.failed
        if failed is None and state.stopping is not None:
            say(state.stopping)
        try:
            checkpoints = await read_checkpoints(self.config, self.coordinator.job_model.tasks)
        except SamzaError as exc:
            say(f"reading the final checkpoints failed: {exc}")
            checkpoints = None
        print(summary(job, self.processed, elapsed, checkpoints), flush=True)
        if failed is None:
            return EXIT_OK
        # A container that exits 2 refused the config: so does the job.
        kind = ConfigError if failed.exit_status == EXIT_CONFIG else SamzaError
        return report_error(kind(self._failure(failed)), self.verbose)

    def _failure(self, child: _Child) -> str:
        report = self.coordinator.job_status().reports.get(child.container_id)
        status = child.exit_status or 0
        how = (
            f"was killed by {signal.Signals(-status).name}" if status < 0 else f"exited with status {status}"
        )
        detail = report.error if report is not None and report.error else child.last_line
        return (
            f"container {child.container_id} failed: {detail} ({how})"
            if detail
            else f"container {child.container_id} {how}"
        )


async def _relay(child: _Child, tell: Callable[[str], None]) -> None:
    """Copy a container's stderr lines to ours, prefixed with its id; remember the last one."""
    stream = child.process.stderr
    assert stream is not None
    while line := await stream.readline():
        text = line.decode(errors="replace").rstrip()
        if text:
            child.last_line = text.removeprefix(f"{PROG}: ").removeprefix(f"container {child.container_id}: ")
            tell(f"[container {child.container_id}] {child.last_line}")


def _numeric(cid: str) -> tuple[int, str]:
    return (int(cid), cid) if cid.isdigit() else (sys.maxsize, cid)


__all__ = ["MultiContainerRun", "run_containers"]
