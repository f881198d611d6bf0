"""The arguments every ``samza-nb`` command about one job shares: ``--config-path FILE`` and ``--set
KEY=VALUE`` (repeatable), and the config they load (:func:`load_job_config`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from samza_nb.config import load_config
from samza_nb.errors import ConfigError
from samza_nb.runtime.config_check import check_job_config

if TYPE_CHECKING:
    from samza_nb.config import Config


def add_job_config_arguments(parser: argparse.ArgumentParser, set_help: str = "override a config key "
                             "(repeatable), as for run") -> None:  # fmt: skip
    """Add ``--config-path FILE`` (required) and ``--set KEY=VALUE ...`` (``args.overrides``) to
    ``parser``."""
    parser.add_argument(
        "--config-path", required=True, metavar="FILE", help="job config (.properties or .toml)"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="extend",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help=set_help,
    )


def add_job_command(
    commands: Any, name: str, help: str, doc: str | None, handler: Callable[[argparse.Namespace], int]
) -> argparse.ArgumentParser:
    """Subcommand ``name`` about one job: its module's ``doc`` as the description, the job config arguments,
    ``--verbose``, and ``handler``; the parser, for the command's own options."""
    parser: argparse.ArgumentParser = commands.add_parser(
        name,
        help=help,
        description=(doc or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_job_config_arguments(parser)
    parser.add_argument("--verbose", "-v", action="store_true", help="show tracebacks of errors")
    parser.set_defaults(handler=handler)
    return parser


def load_job_config(path: str, overrides: Sequence[str], strict: bool = False) -> Config:
    """The config file with ``KEY=VALUE`` overrides applied, validated. An unknown key that looks like a
    typo of a known one is a ConfigError naming it and the key it resembles (``strict`` is accepted for
    compatibility: it changes nothing)."""
    values: dict[str, str] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"--set {item!r}: expected KEY=VALUE")
        values[key.strip()] = value.strip()
    config = load_config(Path(path), validate=False).with_overrides(values).validate()
    check_job_config(config)
    return config


__all__ = ["add_job_command", "add_job_config_arguments", "load_job_config"]
