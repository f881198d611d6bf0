"""``samza-nb coordinator-stream-writer --config-path PATH --type set-config --key K --value V``: write one
config message to the job's coordinator stream (as Samza's CoordinatorStreamWriter), with source
``coordinator-stream-writer``. A running job's coordinator catches up with it (``job.coordinator.catchup.ms``)
and serves it in the job model's config; ``samza-nb run`` submits its own config file, which replaces the
stream's config as Samza's job runner does, so a value meant to last belongs in the file. Only
``set-config`` is written; any other type is refused (exit status 2) and nothing is sent.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any, Final

from samza_nb.config import Config, load_config
from samza_nb.coordinator.messages import SET_CONFIG, CoordinatorStreamMessage
from samza_nb.coordinator.stream_store import CoordinatorStreamStore
from samza_nb.errors import ConfigError, SamzaError

SOURCE: Final[str] = "coordinator-stream-writer"
EXIT_OK: Final[int] = 0
EXIT_FAILED: Final[int] = 1
EXIT_USAGE: Final[int] = 2


def add_coordinator_stream_writer_command(commands: Any) -> None:
    """Add ``samza-nb coordinator-stream-writer`` to the CLI's subparsers (handler:
    :func:`coordinator_stream_writer_command`)."""
    command = commands.add_parser(
        "coordinator-stream-writer",
        help="write a config message to a job's coordinator stream",
        description="Write one set-config message (KEY = VALUE) to the coordinator stream of the job "
        "described by a config file. A running job's coordinator picks it up; the next samza-nb run "
        "replaces the stream's config with its config file, as Samza's job runner does.",
    )
    command.add_argument(
        "--config-path",
        required=True,
        metavar="FILE",
        help="job config (.properties or .toml; file:// allowed)",
    )
    command.add_argument("--type", required=True, help=f"message type: only {SET_CONFIG} is supported")
    command.add_argument("--key", help="the config key")
    command.add_argument("--value", help="the config value")
    command.set_defaults(handler=coordinator_stream_writer_command)


def coordinator_stream_writer_command(args: argparse.Namespace) -> int:
    """Validate the arguments, then send the message and wait until it is durable.

    Exit status: 0 written, 1 the stream could not be written, 2 bad usage or config (nothing sent).
    """
    if args.type != SET_CONFIG:
        return _error(
            f"--type {args.type!r} is not supported: the coordinator stream writer only writes {SET_CONFIG}"
        )
    if not args.key or args.value is None:
        return _error(f"--type {SET_CONFIG} needs --key and --value")
    try:
        config = load_config(Path(_path_of(args.config_path)))
        message = CoordinatorStreamMessage.set_config(args.key, args.value, SOURCE)
        where = asyncio.run(_send(config, message))
    except SamzaError as exc:
        return _error(str(exc), EXIT_USAGE if isinstance(exc, ConfigError) else EXIT_FAILED)
    print(f"wrote {SET_CONFIG} {args.key} = {args.value} to {where}", flush=True)
    return EXIT_OK


async def _send(config: Config, message: CoordinatorStreamMessage) -> str:
    store = CoordinatorStreamStore(config)
    try:
        await store.start()
        await store.send([message])
    finally:
        await store.stop()
    return str(store)


def _path_of(text: str) -> str:
    return text[len("file://") :] if text.startswith("file://") else text


def _error(message: str, status: int = EXIT_USAGE) -> int:
    print(f"samza-nb: error: {' '.join(message.split())}", file=sys.stderr, flush=True)
    return status


__all__ = ["SOURCE", "add_coordinator_stream_writer_command", "coordinator_stream_writer_command"]
