"""``samza-nb reset --config-path FILE [--set KEY=VALUE ...]``: the job starts over (the reset table of
docs/how-to/operating.md).

Its checkpoints (wherever ``task.checkpoint.factory`` keeps them), its state files and, for Spark outputs,
their generation are dropped together; its changelogs start anew at the next run
(samza_nb.runtime.reset). One line says what was dropped. Refused, changing nothing, while the job
runs (another process holds its files). Exit status: 0 reset, 1 refused or failed, 2 bad config or usage.
"""

from __future__ import annotations

import argparse
from typing import Any

from samza_nb.runtime.cli.job_args import add_job_command, load_job_config
from samza_nb.runtime.console import EXIT_OK, report_error, setup_logging


def add_reset_command(commands: Any) -> None:
    """``samza-nb reset``."""
    add_job_command(
        commands,
        "reset",
        "make a job start over: drop its checkpoints, state and output generation",
        __doc__,
        reset_command,
    )


def reset_command(args: argparse.Namespace) -> int:
    """Reset the job; print the line saying what was dropped."""
    from samza_nb.runtime.reset import reset_job  # (DuckDB: loaded by this command only, not by `run`)

    setup_logging(args.verbose)
    try:
        line = reset_job(load_job_config(args.config_path, args.overrides))
    except Exception as exc:
        return report_error(exc, args.verbose)
    print(line, flush=True)
    return EXIT_OK


__all__ = ["add_reset_command", "reset_command"]
