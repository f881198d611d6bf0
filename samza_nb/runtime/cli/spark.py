"""``samza-nb run --runner spark``: the job coordinator in this process (the Spark driver) and the
``job.container.count`` containers as the tasks of one Spark job (:class:`~.spark.SparkJobRunner`).

The SparkSession is made from ``spark.master`` (default ``local[<containers>,4]``) and ``spark.conf.*``;
Spark's console progress is off and the output of its JVM (Spark's log, the containers' standard error) goes
to ``<job.logged.store.base.dir>/<job.name>-<job.id>/spark-driver.log`` (``--verbose``: the terminal), so the
run shows one tqdm bar counting every container's messages. ``--max-messages`` counts them all and then stops
the job (containers report every ``cluster-manager.container.status.interval.ms``, so they may pass the limit
by what they process meanwhile); ``--timeout`` stops it after S seconds; Ctrl-C or SIGTERM stops it gracefully
(each container commits), a second signal cancels the Spark job at once. A failed container is retried by
Spark; when its retries run out the run exits non-zero with one line naming it (2 when it refused the config,
else 1), after the summary line.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from samza_nb.api.streams import SystemStreamPartition
from samza_nb.config import Config
from samza_nb.errors import SamzaError
from samza_nb.runtime.applications import JobProgram
from samza_nb.runtime.console import (
    EXIT_OK,
    PROG,
    PROGRESS_INTERVAL_S,
    isatty,
    progress_bar,
    report_error,
    say,
    summary,
)
from samza_nb.runtime.spark.runner import SparkJobRunner
from samza_nb.runtime.spark.slot_wait import SlotWait
from samza_nb.systems.spark.session import CONF_PREFIX, jvm_log_path

QUIET = {"spark.ui.showConsoleProgress": "false"}
"""Spark settings of the session this command makes, unless the config sets them (``spark.conf.<key>``)."""


def run_on_spark(config: Config, args: argparse.Namespace, program: JobProgram | None = None) -> int:
    """Run ``config``'s job with the Spark runner (see the module); the exit status. ``program``: what
    the job runs, when the caller decided it already."""
    run = SparkRun(config, args.max_messages, args.timeout, args.no_progress, args.verbose, program)
    return run.run()


class SparkRun:
    """One ``samza-nb run --runner spark``, from the session to the summary line."""

    def __init__(
        self,
        config: Config,
        max_messages: int | None,
        timeout: float | None,
        no_progress: bool,
        verbose: bool = False,
        program: JobProgram | None = None,
    ) -> None:
        self.program = program
        quiet = {CONF_PREFIX + k: v for k, v in QUIET.items() if CONF_PREFIX + k not in config}
        self.config = config.with_overrides(quiet) if quiet else config
        self.max_messages = max_messages
        self.timeout = timeout
        self.no_progress = no_progress
        self.verbose = verbose
        self.runner: SparkJobRunner | None = None
        self.stopping: str | None = None
        self.forced: int | None = None
        self.signals = 0
        self._tell: Callable[[str], None] = say
        self._holders: tuple[str, ...] = ()

    def run(self) -> int:
        """Start, watch, stop, report."""
        started = time.monotonic()
        bar = progress_bar(self.config.job_name(), enabled=not self.no_progress and isatty(sys.stderr))
        if bar is not None:
            self._tell = lambda text: bar.write(f"{PROG}: {text}", file=sys.stderr)
        restore = _install_signal_handlers(self._on_signal)
        try:
            try:
                jvm_log = None if self.verbose else jvm_log_path(self.config)
                runner = self.runner = SparkJobRunner(self.config, jvm_log=jvm_log, program=self.program)
                runner.on_wait = lambda wait: self._waiting(wait, bar)
                if self.signals:
                    runner.stop()
                runner.start()
                self._quiet(runner.spark)
            except Exception as exc:
                return report_error(exc, self.verbose)
            while not runner.join(PROGRESS_INTERVAL_S):
                self._tick(runner, bar, started)
        finally:
            restore()
            if bar is not None:
                if self.runner is not None:
                    bar.update(self.runner.processed - bar.n)
                bar.close()
        return self._report(runner, time.monotonic() - started)

    def _waiting(self, wait: SlotWait | None, bar: Any) -> None:
        """Spark has fewer task slots than the job needs: the bar says what it waits for; a line says it
        when other applications hold the slots (they must end or be capped first)."""
        if bar is not None:
            bar.set_postfix_str(wait.line if wait is not None else "", refresh=True)
        if wait is not None and wait.holders and wait.holders != self._holders:
            self._tell(wait.line)
        self._holders = wait.holders if wait is not None else ()

    def _quiet(self, spark: Any) -> None:
        if spark is not None:
            spark.sparkContext.setLogLevel("WARN" if self.verbose else "FATAL")

    def _tick(self, runner: SparkJobRunner, bar: Any, started: float) -> None:
        processed = runner.processed
        if bar is not None and processed != bar.n:
            bar.update(processed - bar.n)
        if self.max_messages is not None and processed >= self.max_messages:
            self._stop(f"stopped after --max-messages {self.max_messages}")
        if self.timeout is not None and time.monotonic() - started > self.timeout:
            self._stop(f"stopped after --timeout {self.timeout:g} s (run limit reached)")

    def _stop(self, why: str) -> None:
        if self.stopping is None:
            self.stopping = why
            if self.runner is not None:
                self.runner.stop()

    def _on_signal(self, signum: int) -> None:
        self.signals += 1
        name = signal.Signals(signum).name
        if self.signals == 1:
            self._tell(
                f"{name}: stopping every container gracefully (each commits); press Ctrl-C again to force"
            )
            self._stop("interrupted; stopped gracefully")
        elif self.signals == 2 and self.runner is not None:
            self._tell(f"{name}: cancelling the Spark job of the containers")
            self.forced = 128 + signum
            self.runner.cancel()
        else:
            sys.stderr.flush()
            os._exit(128 + signum)

    def _report(self, runner: SparkJobRunner, elapsed: float) -> int:
        processed = runner.processed
        if self.forced is not None:
            say(f"forced stop after {processed} messages; offsets since the last commit may not be saved")
            return self.forced
        if runner.failure is None and self.stopping is not None:
            say(self.stopping)
        checkpoints: dict[str, dict[SystemStreamPartition, str]] | None
        try:
            checkpoints = asyncio.run(runner.read_checkpoints())
        except SamzaError as exc:
            say(f"reading the final checkpoints failed: {exc}")
            checkpoints = None
        print(summary(runner.name, processed, elapsed, checkpoints), flush=True)
        if runner.failure is None:
            return EXIT_OK
        if runner.jvm_log is not None:
            say(f"Spark's log and the containers' standard error: {runner.jvm_log}")
        return report_error(runner.failure_kind(runner.failure), self.verbose)


def _install_signal_handlers(handler: Callable[[int], None]) -> Callable[[], None]:
    """SIGINT and SIGTERM to ``handler`` (this runs on the main thread, with no event loop)."""
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, lambda signum, _frame: handler(signum))
        except ValueError:  # not the main thread
            continue

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore


__all__ = ["SparkRun", "run_on_spark"]
