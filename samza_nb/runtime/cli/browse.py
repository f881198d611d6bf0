"""``samza-nb browse --config-path FILE SYSTEM.STREAM [--partition P] [--from OFFSET] [--key K] [-n N]``:
print a stream's messages, as ``%samza_browse`` shows them in a notebook.

The stream is any stream of a system the job's config names (Kafka, the embedded durable log, a file),
read with that system's admin and consumer and decoded with the stream's serdes. Output: a header line,
then one tab-separated line per message: partition, offset, key, value, headers, timestamp; then a line for
each partition with nothing to show. Exit status: 0 shown, 1 a stream, partition or offset that does not
exist (one line naming it), 2 bad config or usage.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from samza_nb.runtime.cli.job_args import add_job_command, load_job_config
from samza_nb.runtime.console import EXIT_OK, report_error, setup_logging
from samza_nb.systems.browse import HEADERS, add_browse_arguments, browse, message_row, parse_stream


def add_browse_command(commands: Any) -> None:
    """``samza-nb browse``."""
    parser = add_job_command(
        commands, "browse", "print the messages of a stream of a job", __doc__, browse_command
    )
    add_browse_arguments(parser)


def browse_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Print the messages; one line on stderr and exit 1 for a stream, partition or offset that does not
    exist."""
    from samza_nb.container.event_loop import run_blocking

    setup_logging(args.verbose)
    stdout = out or sys.stdout
    try:
        config = load_job_config(args.config_path, args.overrides)
        result = run_blocking(
            browse(
                config,
                parse_stream(args.stream),
                partition=args.partition,
                start=args.start,
                key=args.key,
                limit=args.limit,
            )
        )
    except Exception as exc:
        return report_error(exc, args.verbose)
    print("\t".join(HEADERS), file=stdout)
    for message in result.messages:
        print("\t".join(message_row(message)), file=stdout)
    for note in result.notes:
        print(f"# {note}", file=stdout)
    return EXIT_OK


__all__ = ["add_browse_command", "browse_command"]
