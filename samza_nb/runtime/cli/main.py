"""The ``samza-nb`` command line (also ``python -m samza_nb``).

``samza-nb run --config-path job.properties`` runs the job in this process until its inputs end, a limit is
reached (``--max-messages``, ``--timeout``) or it is interrupted (Ctrl-C, SIGTERM: a graceful stop that
commits; a second Ctrl-C forces it). ``--restore-state`` first moves the job's unusable state files
(truncated, not DuckDB, damaged) aside, so their stores restore from the changelogs. ``--record DIR``
records the run's schedule, ``--replay DIR`` runs it again forcing it. Exit status: 0 done
or stopped, 1 the job failed, 2 bad config or usage, 130 forced stop.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from samza_nb.config import Config
from samza_nb.coordinator.job_coordinator import JobCoordinator
from samza_nb.errors import ConfigError, JobTimeoutError
from samza_nb.runtime.applications import JobProgram, what_job_runs
from samza_nb.runtime.cli.browse import add_browse_command
from samza_nb.runtime.cli.clean import add_clean_command
from samza_nb.runtime.cli.container import add_container_command
from samza_nb.runtime.cli.control import add_control_command
from samza_nb.runtime.cli.coordinator_stream_writer import add_coordinator_stream_writer_command
from samza_nb.runtime.cli.dev_broker import add_dev_broker_command
from samza_nb.runtime.cli.job_args import add_job_config_arguments, load_job_config
from samza_nb.runtime.cli.log_dump import add_log_dump_command
from samza_nb.runtime.cli.reset import add_reset_command
from samza_nb.runtime.cli.spark_archive import add_spark_class_archive_command
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
    setup_logging,
    summary,
)
from samza_nb.runtime.job_group import JobGroup
from samza_nb.runtime.local import LocalJobRunner
from samza_nb.runtime.multi_container import MultiContainerRun, run_containers
from samza_nb.storage.duckdb.open_errors import RESTORE_STATE_OPTION

if TYPE_CHECKING:
    from typing import TypeAlias

    from samza_nb.api.streams import SystemStreamPartition

    Runner: TypeAlias = LocalJobRunner | JobGroup  # one job, or several at once (a split application's)


# -- argument parsing ------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand; a subcommand sets ``handler`` (args -> exit status)."""
    parser = argparse.ArgumentParser(prog=PROG, description="Run samza_nb jobs from the command line.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_run_command(commands)
    add_coordinator_stream_writer_command(commands)
    add_log_dump_command(commands)
    add_container_command(commands)
    add_control_command(commands)
    add_reset_command(commands)
    add_clean_command(commands)
    add_spark_class_archive_command(commands)
    add_browse_command(commands)
    return parser


def add_run_command(commands: Any) -> None:
    """``samza-nb run``."""
    run = commands.add_parser(
        "run",
        help="run a job (one container in this process, or job.container.count processes)",
        description="Run the job described by a config file: as one container in this process, or with "
        "job.container.count = N > 1 as a job coordinator here and N container processes. The task "
        "class comes from task.class (a dotted path importable from the working directory), or a "
        "StreamApplication from app.class: it is planned first, and with app.split.jobs = true each of "
        "its stages runs as a job of its own, all at once, until every one stopped.",
    )
    add_job_config_arguments(run, "override a config key (repeatable)")
    run.add_argument(
        "--max-messages",
        type=_positive_int,
        metavar="N",
        help="stop after N processed messages (commits); each job of a split application after N",
    )
    run.add_argument(
        "--timeout", type=_positive_float, metavar="S", help="stop gracefully after S seconds (commits)"
    )
    run.add_argument(
        "--runner",
        choices=("local", "spark"),
        default="local",
        help="local (default): this process, or job.container.count processes on this machine; spark: "
        "the containers as the tasks of one Spark job (spark.master, default local[<containers>,4])",
    )
    run.add_argument(
        "--strict",
        action="store_true",
        help="accepted for compatibility: an unknown config key that looks like a typo of a known one is "
        "always an error",
    )
    run.add_argument(
        RESTORE_STATE_OPTION,
        action="store_true",
        help="first move the job's unusable state files (truncated, not DuckDB, damaged) aside as "
        "<file>.unusable-<time>, so their stores restore from the changelogs",
    )
    schedule = run.add_mutually_exclusive_group()
    schedule.add_argument(
        "--record",
        metavar="DIR",
        help="record the run's schedule (its starting checkpoint, every message started, async completion "
        "and window/commit timer, in order) into DIR, as job.record.path = DIR does",
    )
    schedule.add_argument(
        "--replay",
        metavar="DIR",
        help="run the job again from the starting checkpoint of the run recorded in DIR, over the same "
        "inputs, forcing its schedule (same order of messages, completions and timers); input that differs "
        "from the recording fails the run naming the first position where they part",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--verbose", "-v", action="store_true", help="log more; show tracebacks of errors")
    run.set_defaults(handler=run_command)
    add_dev_broker_command(commands)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``samza-nb``; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(sys.stderr)
        return EXIT_CONFIG
    try:
        return handler(args)
    except KeyboardInterrupt:  # before the job's own signal handling was in place
        say("interrupted")
        return 128 + signal.SIGINT


# -- samza-nb run ----------------------------------------------------------------------------------------
def run_command(args: argparse.Namespace) -> int:
    """``samza-nb run``: load the job, run it, report."""
    setup_logging(args.verbose)
    try:
        overrides = [*args.overrides, f"job.record.path={args.record}"] if args.record else args.overrides
        config = load_job_config(args.config_path, overrides, args.strict)
        if args.replay or config.get_str("job.record.path"):
            refuse_schedule_for(config, args)
        program = what_job_runs(config)
        if args.restore_state and not program.needs_planning:
            restore_state([config])
        if args.runner == "spark":
            from samza_nb.runtime.cli.spark import run_on_spark  # imports pyspark only when asked

            return run_on_spark(config, args, program)
        if program.needs_planning:
            return asyncio.run(_run_application(config, program, args))
        if config.get_int("job.container.count", 1) > 1:
            return run_containers(config, args)
        task = program.task_factory()
    except Exception as exc:
        return report_error(exc, args.verbose)
    return asyncio.run(_run_coordinated([config], task, args))


def refuse_schedule_for(config: Config, args: argparse.Namespace) -> None:
    """``--record``/``--replay`` (or ``job.record.path``) are for a job run as one container in this process:
    a ConfigError otherwise."""
    option = "--replay" if args.replay else "--record (job.record.path)"
    if args.runner == "spark":
        raise ConfigError(f"{option}: a schedule is recorded and replayed with --runner local only")
    if config.get_int("job.container.count", 1) > 1:
        raise ConfigError(
            f"{option}: a schedule is recorded and replayed for a job run as one container "
            "(job.container.count = 1)",
            key="job.container.count",
        )


def restore_state(configs: Sequence[Config]) -> None:
    """``--restore-state``: move each job's unusable state files aside, saying so (one line each)."""
    from samza_nb.storage.restore_state import set_aside_unusable_state  # (DuckDB: only when asked)

    for config in configs:
        for moved in set_aside_unusable_state(config):
            say(
                f"{RESTORE_STATE_OPTION}: moved {moved.path} ({moved.reason}) aside to {moved.moved_to}; "
                "its stores restore from their changelogs"
            )


async def _run_application(config: Config, program: JobProgram, args: argparse.Namespace) -> int:
    """Plan the application of ``app.class`` (``program``), then run its jobs (one, or one per stage)."""
    try:
        prepared = await program.plan(config)
        if args.restore_state:
            restore_state(prepared.jobs)
    except Exception as exc:
        return report_error(exc, args.verbose)
    if config.get_int("job.container.count", 1) > 1:
        run = MultiContainerRun(
            prepared.jobs, args.max_messages, args.timeout, args.no_progress, args.verbose
        )
        return await run.run()
    return await _run_coordinated(prepared.jobs, prepared.task_factory, args)


async def _run_coordinated(
    configs: Sequence[Config], task: Callable[[], Any], args: argparse.Namespace
) -> int:
    """Each job as one container in this process, on the job model of a job coordinator running beside it
    (so the config and task layout are kept in the coordinator stream, and an incompatible change is
    refused); several jobs (a split application's) run at once until every one stopped."""
    if len(configs) > 1 and (args.replay or configs[0].get_str("job.record.path")):
        return report_error(
            ConfigError(
                "--record/--replay: the application runs as several jobs; record one (app.stage = N)"
            ),
            args.verbose,
        )
    coordinators = [JobCoordinator(config) for config in configs]
    try:
        try:
            runners = []
            for coordinator in coordinators:
                await coordinator.start()
                runners.append(
                    LocalJobRunner(
                        coordinator.config,
                        task,
                        max_messages=args.max_messages,
                        job_model=coordinator.job_model,
                        replay=args.replay,
                    )
                )
        except Exception as exc:
            return report_error(exc, args.verbose)
        if len(runners) == 1:
            return await _run(runners[0], args)
        return await _run(JobGroup(configs[0].get_str("app.name") or configs[0].job_name(), runners), args)
    finally:
        for coordinator in coordinators:
            await coordinator.stop()


class _Interrupts:
    """What the signal handlers did: the first signal stops gracefully, the second forces, the third
    exits at once."""

    def __init__(self, runner: Runner, job: asyncio.Future[None], say: Callable[[str], None]) -> None:
        self.runner = runner
        self.job = job
        self.say = say
        self.count = 0
        self.forced_status: int | None = None

    def __call__(self, signum: int) -> None:
        self.count += 1
        name = signal.Signals(signum).name
        if self.count == 1:
            self.say(f"{name}: stopping gracefully (commits); press Ctrl-C again to force")
            self.runner.stop()
        elif self.count == 2:
            if self.job.cancel():  # False: the job already ended; nothing to force
                self.say(f"{name}: forcing the stop (no commit)")
                self.forced_status = 128 + signum
        else:
            sys.stderr.flush()
            os._exit(128 + signum)


async def _run(runner: Runner, args: argparse.Namespace) -> int:
    loop = asyncio.get_running_loop()
    started = time.monotonic()
    job = asyncio.ensure_future(runner.run_async(args.timeout))
    bar = progress_bar(runner.name, enabled=not args.no_progress and isatty(sys.stderr))
    tell = say if bar is None else (lambda text: bar.write(f"{PROG}: {text}", file=sys.stderr))
    interrupts = _Interrupts(runner, job, tell)
    restore = install_signal_handlers(loop, interrupts)
    ticker = asyncio.create_task(_tick(runner, bar)) if bar is not None else None
    note: str | None = None
    error: BaseException | None = None
    try:
        try:
            await job
        except JobTimeoutError:
            note = f"stopped after --timeout {args.timeout:g} s (run limit reached)"
        except asyncio.CancelledError:
            if interrupts.forced_status is None:
                raise
        except Exception as exc:
            error = exc
    finally:
        restore()
        if ticker is not None:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
        if bar is not None:
            bar.update(runner.processed - bar.n)
            bar.close()
    elapsed = time.monotonic() - started
    if interrupts.forced_status is not None:
        say(f"forced stop after {runner.processed} messages; offsets since the last commit are not saved")
        return interrupts.forced_status
    if error is not None and runner.job_model is None:
        return report_error(error, args.verbose)  # it never got to run its tasks: no summary
    if note is not None:
        say(note)
    elif error is None and interrupts.count:
        say("interrupted; stopped gracefully")
    elif error is None and args.max_messages is not None and runner.processed >= args.max_messages:
        say(f"stopped after --max-messages {args.max_messages}")
    checkpoints: dict[str, dict[SystemStreamPartition, str]] | None
    try:
        checkpoints = await runner.read_checkpoints()
    except Exception as exc:
        logging.getLogger(__name__).info("reading the final checkpoints failed", exc_info=True)
        checkpoints = None
        if error is None:
            error = exc
    print(summary(runner.name, runner.processed, elapsed, checkpoints), flush=True)
    if error is not None:
        return report_error(error, args.verbose)
    return EXIT_OK


# -- progress and summary --------------------------------------------------------------------------------
async def _tick(runner: Runner, bar: Any) -> None:
    """Move the bar to the container's processed count every ~0.2 s (no per-message cost)."""
    while True:
        processed = runner.processed
        if processed != bar.n:
            bar.update(processed - bar.n)
        await asyncio.sleep(PROGRESS_INTERVAL_S)


# -- errors and output -----------------------------------------------------------------------------------
__all__ = ["build_parser", "load_job_config", "main", "run_command"]
