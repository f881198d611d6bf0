"""``samza-nb control pause|resume|set KEY=VALUE ...|show --coordinator-url URL``: steer the containers of a
running multi-container (or Spark) job through its job coordinator.

``pause`` asks every container to pause (no new message; in-flight ones complete; every task commits) and
waits until each confirmed it (``--timeout``, default 60 s); ``resume`` asks them to dispatch again;
``set`` changes live knobs (``task.max.concurrency``, ``task.commit.ms``, ``task.window.ms``,
``systems.<s>.streams.<t>.samza.priority``, ``task.consumer.batch.size``; any other key is refused, naming
the live ones); ``show`` prints the control state. A container learns a change on its next status report,
so within one ``cluster-manager.container.status.interval.ms``. The URL is the one ``samza-nb run`` prints
when it starts a job of several containers (default ``$SAMZA_COORDINATOR_URL``); a coordinator bound to a
non-loopback address needs the job's token (``--token``, default ``$SAMZA_COORDINATOR_TOKEN``).
Exit status: 0 done, 1 failed (unreachable, pause not confirmed in time), 2 a command the coordinator refused.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from samza_nb.coordinator.client import (
    TOKEN_ENV,
    URL_ENV,
    CoordinatorUnreachable,
    send_control,
)
from samza_nb.errors import ConfigError
from samza_nb.runtime.console import EXIT_OK, report_error, setup_logging

PAUSE_TIMEOUT_S = 60.0
BAD_REQUEST = 400


def add_control_command(commands: Any) -> None:
    """``samza-nb control``."""
    parser = commands.add_parser(
        "control",
        help="pause, resume or set live knobs of a running job of several containers",
        description=(__doc__ or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=("pause", "resume", "set", "show"))
    parser.add_argument("changes", nargs="*", metavar="KEY=VALUE", help="for set: the knobs to change")
    parser.add_argument("--coordinator-url", default=os.environ.get(URL_ENV), help=f"default: ${URL_ENV}")
    parser.add_argument("--token", default=None, help=f"the job's token (default: ${TOKEN_ENV})")
    parser.add_argument(
        "--timeout",
        type=float,
        default=PAUSE_TIMEOUT_S,
        metavar="S",
        help=f"how long pause waits for every container (default {PAUSE_TIMEOUT_S:g} s)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="show tracebacks of errors")
    parser.set_defaults(handler=control_command)


def control_command(args: argparse.Namespace) -> int:
    """Send the command; print the control state it left (one line of JSON) on stdout."""
    setup_logging(args.verbose)
    try:
        command = _command(args)
        answer = send_control(args.coordinator_url, command, args.timeout + 10.0, args.token)
    except CoordinatorUnreachable as exc:
        cause = exc.__cause__
        refused = getattr(cause, "code", None) == BAD_REQUEST
        return report_error(ConfigError(str(exc)) if refused else exc, args.verbose)
    except Exception as exc:
        return report_error(exc, args.verbose)
    print(json.dumps(answer, sort_keys=True), flush=True)
    return EXIT_OK


def _command(args: argparse.Namespace) -> dict[str, Any]:
    """The control command of ``args`` (a ConfigError for a usage mistake)."""
    if not args.coordinator_url:
        raise ConfigError(f"no --coordinator-url and no {URL_ENV} in the environment")
    if args.action != "set" and args.changes:
        raise ConfigError(f"control {args.action} takes no KEY=VALUE (got {' '.join(args.changes)})")
    if args.action == "pause":
        return {"pause": True, "timeout": args.timeout}
    if args.action == "resume":
        return {"pause": False}
    if args.action == "show":
        return {}
    if not args.changes:
        raise ConfigError("control set needs at least one KEY=VALUE")
    changes: dict[str, str] = {}
    for item in args.changes:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"control set: {item!r} is not KEY=VALUE")
        changes[key.strip()] = value.strip()
    return {"set": changes}


__all__ = ["add_control_command", "control_command"]
