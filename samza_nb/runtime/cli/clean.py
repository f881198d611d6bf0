"""``samza-nb clean --config-path FILE [--set KEY=VALUE ...] [--dry-run] [--all [--topics]]``: remove what a
finished job, or an old generation of it, left (docs/how-to/cleanup.md).

A job is finished when no process runs it: clean is refused, removing nothing, while a run holds the job's
files or a driver its claim on the coordinator stream (as reset is). By default it removes what no run of
the job reads again and keeps the current generation: old Spark output generations (their parquet files
and commit records), state files that --restore-state set aside, and the state files on this machine when
they are a cache (every store has a changelog and every task a checkpoint: the next run restores them).
--all removes the current generation too: the job is reset (its checkpoints forgotten wherever they live)
and its directory, written Spark inputs and every output generation are deleted. --topics (with --all)
also deletes its streams on Kafka systems: coordinator, checkpoint, changelogs, intermediate streams.
--dry-run lists what would go. A few lines say what and how much (files, bytes, topics). Exit status: 0
cleaned (or nothing to clean), 1 refused or failed, 2 bad config or usage.
"""

from __future__ import annotations

import argparse
from typing import Any

from samza_nb.runtime.cli.job_args import add_job_command, load_job_config
from samza_nb.runtime.console import EXIT_OK, report_error, setup_logging


def add_clean_command(commands: Any) -> None:
    """``samza-nb clean``."""
    parser = add_job_command(
        commands,
        "clean",
        "remove what a finished job or an old generation left (old outputs, set-aside state, ...)",
        __doc__,
        clean_command,
    )
    parser.add_argument("--dry-run", action="store_true", help="list what would be removed; remove nothing")
    parser.add_argument(
        "--all",
        dest="everything",
        action="store_true",
        help="the current generation too: reset the job, delete its files, inputs and outputs",
    )
    parser.add_argument(
        "--topics",
        action="store_true",
        help="with --all: also delete the job's Kafka topics (coordinator, checkpoint, changelogs, "
        "intermediate streams)",
    )


def clean_command(args: argparse.Namespace) -> int:
    """Clean the job; print the lines saying what was removed (or would be, with --dry-run)."""
    from samza_nb.runtime.clean import clean_job  # (DuckDB: loaded by this command only, not by `run`)

    setup_logging(args.verbose)
    try:
        config = load_job_config(args.config_path, args.overrides)
        lines = clean_job(config, dry_run=args.dry_run, everything=args.everything, topics=args.topics)
    except Exception as exc:
        return report_error(exc, args.verbose)
    print("\n".join(lines), flush=True)
    return EXIT_OK


__all__ = ["add_clean_command", "clean_command"]
