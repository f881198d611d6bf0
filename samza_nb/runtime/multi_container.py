"""``samza-nb run`` with ``job.container.count`` = N > 1: a job coordinator in this process and N container
processes (:mod:`samza_nb.runtime.processes`) on this machine.

One progress bar counts every container's messages (from the coordinator's status); ``--max-messages``
counts them all and then stops every container (the containers report every
``cluster-manager.container.status.interval.ms``, so they may pass the limit by what they process in that
time); Ctrl-C or SIGTERM stops them gracefully (SIGTERM to each: each commits), a second signal kills them.
A container that fails stops the job: the others are stopped gracefully and the run exits non-zero with
one line naming the failed container (2 when it refused the config, else 1).
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from samza_nb.config import Config
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
from samza_nb.runtime.local import read_checkpoints
from samza_nb.runtime.processes import ContainerProcesses


def run_containers(config: Config, args: argparse.Namespace) -> int:
    """Run ``config``'s job as ``job.container.count`` processes (see the module); the exit status."""
    run = MultiContainerRun(config, args.max_messages, args.timeout, args.no_progress, args.verbose)
    return asyncio.run(run.run())


class MultiContainerRun:
    """The coordinator and its container processes, from start to the summary line."""

    def __init__(
        self,
        config: Config,
        max_messages: int | None,
        timeout: float | None,
        no_progress: bool,
        verbose: bool = False,
    ) -> None:
        self.config = config
        self.max_messages = max_messages
        self.timeout = timeout
        self.no_progress = no_progress
        self.verbose = verbose
        self.processed = 0
        self.signals = 0
        self.stopping: str | None = None
        self.forced: int | None = None
        self._tell: Callable[[str], None] = say
        self.processes = ContainerProcesses(config, self._on_line)

    async def run(self) -> int:
        """Start the coordinator and the containers, watch them, stop them, report."""
        started = time.monotonic()
        processes = self.processes
        bar = progress_bar(self.config.job_name(), enabled=not self.no_progress and isatty(sys.stderr))
        if bar is not None:
            self._tell = lambda text: bar.write(f"{PROG}: {text}", file=sys.stderr)
        restore = install_signal_handlers(asyncio.get_running_loop(), self._on_signal)
        try:
            try:
                await processes.start()
            except Exception as exc:
                return report_error(exc, self.verbose)
            await processes.watch(lambda: self._tick(bar, started), PROGRESS_INTERVAL_S)
        finally:
            restore()
            await processes.close()
            if bar is not None:
                bar.update(self.processed - bar.n)
                bar.close()
        return await self._report(time.monotonic() - started)

    def _tick(self, bar: Any, started: float) -> None:
        """Move the bar; apply --max-messages and --timeout."""
        self.processed = self.processes.processed
        if bar is not None and self.processed != bar.n:
            bar.update(self.processed - bar.n)
        if self.max_messages is not None and self.processed >= self.max_messages:
            self._stop(f"stopped after --max-messages {self.max_messages}")
        if self.timeout is not None and time.monotonic() - started > self.timeout:
            self._stop(f"stopped after --timeout {self.timeout:g} s (run limit reached)")

    def _stop(self, why: str) -> None:
        if self.stopping is None:
            self.stopping = why
            self.processes.stop()

    def _on_signal(self, signum: int) -> None:
        self.signals += 1
        name = signal.Signals(signum).name
        if self.signals == 1:
            self._tell(
                f"{name}: stopping every container gracefully (each commits); press Ctrl-C again to force"
            )
            self._stop("interrupted; stopped gracefully")
        else:
            self._tell(f"{name}: killing the containers (no commit)")
            self.forced = 128 + signum
            self.processes.stop(signal.SIGKILL)

    def _on_line(self, container_id: str, line: str) -> None:
        self._tell(f"[container {container_id}] {line.removeprefix(f'{PROG}: ')}")

    async def _report(self, elapsed: float) -> int:
        if self.forced is not None:
            say(f"forced stop after {self.processed} messages; offsets since the last commit are not saved")
            return self.forced
        failure = self.processes.failure()
        if failure is None and self.stopping is not None:
            say(self.stopping)
        try:
            checkpoints = await read_checkpoints(self.config, self.processes.coordinator.job_model.tasks)
        except SamzaError as exc:
            say(f"reading the final checkpoints failed: {exc}")
            checkpoints = None
        print(summary(self.config.job_name(), self.processed, elapsed, checkpoints), flush=True)
        if failure is None:
            return EXIT_OK
        failed = self.processes.failed
        # A container that exits 2 refused the config: so does the job.
        kind = ConfigError if failed is not None and failed.exit_status == EXIT_CONFIG else SamzaError
        return report_error(kind(failure), self.verbose)


__all__ = ["MultiContainerRun", "run_containers"]
