"""``samza-nb run`` with ``job.container.count`` = N > 1: a job coordinator in this process and N container
processes (:mod:`samza_nb.runtime.processes`) on this machine.

One progress bar counts every container's messages (from the coordinator's status); ``--max-messages``
counts them all and then stops every container (the containers report every
``cluster-manager.container.status.interval.ms``, so they may pass the limit by what they process in that
time); Ctrl-C or SIGTERM stops them gracefully (SIGTERM to each: each commits), a second signal kills them.
A container that fails stops the job: the others are stopped gracefully and the run exits non-zero with
one line naming the failed container (2 when it refused the config, else 1).

Several jobs (the stages of a split application) run the same way at once, each with its own coordinator
and containers, as one run: one bar, one summary, the first failed container stops every job.

When the containers start, the run prints each coordinator's URL: ``samza-nb control pause|resume|set
--coordinator-url URL`` steers the job's containers through it (so do :meth:`MultiContainerRun.pause`,
``resume`` and ``set`` from another thread). With ``SAMZA_COORDINATOR_TOKEN`` in the environment every
request to it needs that token, and its ``/stores`` routes answer with it (their token, else unknown).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.coordinator.client import TOKEN_ENV
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
from samza_nb.runtime.local import read_checkpoints
from samza_nb.runtime.processes import ContainerProcesses
from samza_nb.runtime.steering import CoordinatorSteering


def run_containers(config: Config | Sequence[Config], args: argparse.Namespace) -> int:
    """Run ``config``'s job (or each of several jobs) as ``job.container.count`` processes (see the
    module); the exit status."""
    run = MultiContainerRun(config, args.max_messages, args.timeout, args.no_progress, args.verbose)
    return asyncio.run(run.run())


class MultiContainerRun(CoordinatorSteering):
    """The coordinator and its container processes of each job, from start to the summary line; pause,
    resume and set steer them all (see :class:`CoordinatorSteering`)."""

    def __init__(
        self,
        config: Config | Sequence[Config],
        max_messages: int | None,
        timeout: float | None,
        no_progress: bool,
        verbose: bool = False,
    ) -> None:
        self.configs = [config] if isinstance(config, Config) else list(config)
        self.config = self.configs[0]
        self.max_messages = max_messages
        self.timeout = timeout
        self.no_progress = no_progress
        self.verbose = verbose
        self.processed = 0
        self.signals = 0
        self.stopping: str | None = None
        self.forced: int | None = None
        self._failure_spread = False
        self._tell: Callable[[str], None] = say
        several = len(self.configs) > 1
        token = os.environ.get(TOKEN_ENV) or None  # the job's token, given: also for its /stores routes
        self.jobs = [
            ContainerProcesses(c, self._line_handler(c.job_name() if several else None), token=token)
            for c in self.configs
        ]
        self.processes = self.jobs[0]
        self.name = (self.config.get_str("app.name") or self.config.job_name()) if several else None

    async def run(self) -> int:
        """Start the coordinators and the containers, watch them, stop them, report."""
        started = time.monotonic()
        name = self.name or self.config.job_name()
        bar = progress_bar(name, enabled=not self.no_progress and isatty(sys.stderr))
        if bar is not None:
            self._tell = lambda text: bar.write(f"{PROG}: {text}", file=sys.stderr)
        restore = install_signal_handlers(asyncio.get_running_loop(), self._on_signal)
        try:
            try:
                for processes in self.jobs:
                    await processes.start()
                    coordinator = processes.coordinator
                    stores = (
                        f"; its stores: {coordinator.url}/stores/<store>/keys/<key> with ${TOKEN_ENV}"
                        if coordinator.token
                        else f"; export {TOKEN_ENV} before samza-nb run to query its stores over HTTP"
                    )
                    self._tell(
                        f"job coordinator of {processes.config.job_name()}: {coordinator.url} (samza-nb "
                        f"control pause|resume|set --coordinator-url URL steers its containers{stores})"
                    )
            except Exception as exc:
                return report_error(exc, self.verbose)

            def tick() -> None:
                self._tick(bar, started)

            await asyncio.gather(*(p.watch(tick, PROGRESS_INTERVAL_S) for p in self.jobs))
        finally:
            restore()
            for processes in self.jobs:
                await processes.close()
            if bar is not None:
                bar.update(self.processed - bar.n)
                bar.close()
        return await self._report(time.monotonic() - started)

    def _steered(self) -> list[JobCoordinator]:
        return [processes.coordinator for processes in self.jobs]

    def _tick(self, bar: Any, started: float) -> None:
        """Move the bar; apply --max-messages and --timeout; a failed job stops the others."""
        self.processed = sum(p.processed for p in self.jobs)
        if len(self.jobs) > 1 and not self._failure_spread and any(p.failed for p in self.jobs):
            self._failure_spread = True  # once: a second SIGTERM would force a container's stop
            for processes in self.jobs:
                if processes.failed is None:  # a failed job already stopped its other containers
                    processes.stop()
        if bar is not None and self.processed != bar.n:
            bar.update(self.processed - bar.n)
        if self.max_messages is not None and self.processed >= self.max_messages:
            self._stop(f"stopped after --max-messages {self.max_messages}")
        if self.timeout is not None and time.monotonic() - started > self.timeout:
            self._stop(f"stopped after --timeout {self.timeout:g} s (run limit reached)")

    def _stop(self, why: str) -> None:
        if self.stopping is None:
            self.stopping = why
            for processes in self.jobs:
                processes.stop()

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
            for processes in self.jobs:
                processes.stop(signal.SIGKILL)

    def _line_handler(self, job: str | None) -> Callable[[str, str], None]:
        who = f"{job} container" if job is not None else "container"

        def on_line(container_id: str, line: str) -> None:
            self._tell(f"[{who} {container_id}] {line.removeprefix(f'{PROG}: ')}")

        return on_line

    async def _report(self, elapsed: float) -> int:
        if self.forced is not None:
            say(f"forced stop after {self.processed} messages; offsets since the last commit are not saved")
            return self.forced
        failed_job = next((p for p in self.jobs if p.failed is not None), None)
        failure = failed_job.failure() if failed_job is not None else None
        if failure is None and self.stopping is not None:
            say(self.stopping)
        collected: dict[str, dict[SystemStreamPartition, str]] = {}
        checkpoints: dict[str, dict[SystemStreamPartition, str]] | None = collected
        for processes in self.jobs:
            config = processes.config
            try:
                found = await read_checkpoints(config, processes.coordinator.job_model.tasks)
            except SamzaError as exc:
                say(f"reading the final checkpoints failed: {exc}")
                checkpoints = None
                break
            prefix = f"{config.job_name()}/" if self.name is not None else ""
            collected.update({f"{prefix}{task}": offsets for task, offsets in found.items()})
        name = self.name or self.config.job_name()
        print(summary(name, self.processed, elapsed, checkpoints), flush=True)
        if failure is None or failed_job is None:
            return EXIT_OK
        failed = failed_job.failed
        # A container that exits 2 refused the config: so does the job.
        kind = ConfigError if failed is not None and failed.exit_status == EXIT_CONFIG else SamzaError
        return report_error(kind(failure), self.verbose)


__all__ = ["MultiContainerRun", "run_containers"]
