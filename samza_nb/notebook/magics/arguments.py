"""The argument parser of a line magic: shell quoting, ``#`` comments, a mistake is one line."""

from __future__ import annotations

import argparse
import shlex
from typing import NoReturn

from samza_nb.notebook.errors import NotebookError


class MagicArguments(argparse.ArgumentParser):
    """argparse for a line magic: a mistake is a NotebookError (one line), never an exit."""

    def __init__(self, magic: str) -> None:
        super().__init__(prog=magic, add_help=False, exit_on_error=False)

    def error(self, message: str) -> NoReturn:
        """Raise, instead of printing usage and exiting."""
        raise NotebookError(f"{self.prog}: {message}")

    def parse(self, line: str) -> argparse.Namespace:
        """The options in ``line`` (shell quoting allowed; a ``#`` starts a comment)."""
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise NotebookError(f"{self.prog}: {exc}") from None
        try:
            return self.parse_args(words)
        except argparse.ArgumentError as exc:
            raise NotebookError(f"{self.prog}: {exc}") from None


__all__ = ["MagicArguments"]
