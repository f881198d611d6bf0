"""``samza-nb log-dump DIR STREAM [--partition N] [--from OFFSET]``: print a durable log stream for people.

One line per flushed record, in offset order per partition: ``partition offset key value``. A key or value
that is UTF-8 text without control characters is printed as it is; other text is printed as a quoted
Python string; bytes that are not UTF-8 as ``0x`` + hex; a missing key as ``-``, a None value (a
tombstone) as ``(tombstone)``. A record with headers has them after the value, each as ``name=value`` (name
and value printed as keys are; a None value as ``(null)``) behind ``headers:``, e.g.
``0 5 k v headers: trace=abc bin=0xff01``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from samza_nb.errors import SamzaError

EXIT_OK = 0
EXIT_FAILED = 1


def add_log_dump_command(commands: Any) -> None:
    """Add ``samza-nb log-dump DIR STREAM [--partition N] [--from OFFSET]`` to the CLI's subparsers."""
    command = commands.add_parser(
        "log-dump",
        help="print the records of a durable log stream",
        description="Print the flushed records of STREAM in the durable log directory DIR (a job's "
        "systems.<name>.log.dir, by default <job.logged.store.base.dir>/log): one line per record, "
        "partition, offset, key and value.",
    )
    command.add_argument("directory", metavar="DIR", help="the durable log directory")
    command.add_argument("stream", metavar="STREAM", help="the stream to print")
    command.add_argument("--partition", type=int, metavar="N", help="only this partition (default: all)")
    command.add_argument(
        "--from", dest="start", type=int, default=0, metavar="OFFSET", help="first offset printed (default 0)"
    )
    command.set_defaults(handler=log_dump_command)


def readable(data: bytes | None, none: str) -> str:
    """``data`` for a person: UTF-8 text as is (quoted when it holds control characters or spaces at its
    ends), other bytes as ``0x`` + hex, None as ``none``."""
    if data is None:
        return none
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return "0x" + data.hex()
    if text and text.isprintable() and text == text.strip():
        return text
    return repr(text)


def log_dump_command(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """``samza-nb log-dump``: print the records; exit 1 with a one-line error for a missing directory,
    stream or partition, a bad offset, or a damaged file."""
    from samza_nb.systems.log import DurableLog

    stdout = out or sys.stdout
    directory = Path(args.directory)
    try:
        if not directory.is_dir():
            raise SamzaError(f"{directory} is not a durable log directory (it does not exist)")
        if args.start < 0:
            raise SamzaError(f"--from {args.start}: offsets are 0, 1, ...")
        with DurableLog(directory) as log:
            count = log.partitions(args.stream)
            if args.partition is not None and not 0 <= args.partition < count:
                raise SamzaError(
                    f"--partition {args.partition}: stream {args.stream!r} has partitions 0..{count - 1}"
                )
            numbers = range(count) if args.partition is None else [args.partition]
            for number in numbers:
                for offset, key, value, headers in log.read_records(args.stream, number, args.start):
                    line = f"{number} {offset} {readable(key, '-')} {readable(value, '(tombstone)')}"
                    if headers:
                        line += " headers: " + " ".join(
                            f"{readable(name.encode(), '-')}={readable(item, '(null)')}"
                            for name, item in headers
                        )
                    print(line, file=stdout)
    except BrokenPipeError:  # pragma: no cover - e.g. piped into head
        return EXIT_OK
    except SamzaError as exc:
        print(f"samza-nb: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    return EXIT_OK


__all__ = ["add_log_dump_command", "log_dump_command", "readable"]
