"""The notebook magics' reference, generated from the magics themselves: each magic of ``SamzaMagics`` (in
the order the class defines them), its usage and options from its own argument parser
(``samza_nb.notebook.magics.parsers.PARSERS``) and its docstring. A new option appears here as soon as
its parser has it; a magic without a parser (a cell form) shows its docstring alone."""

from __future__ import annotations

import argparse
import inspect
import re

from samza_nb.notebook.magics.parsers import PARSERS
from samza_nb.notebook.magics.registration import SamzaMagics

USAGE = re.compile(r"``%[^`]*``", re.S)
"""A docstring paragraph that is only the magic's usage."""


def magic_names() -> list[tuple[str, str]]:
    """(name, ``%`` for a line magic (it may have a cell form too) or ``%%`` for a cell magic) of every magic,
    in definition order."""
    kinds = SamzaMagics.magics
    names = []
    for attribute in vars(SamzaMagics):
        line, cell = attribute in kinds["line"], attribute in kinds["cell"]
        if line or cell:
            names.append((attribute, "%" if line else "%%"))
    return names


def option(action: argparse.Action) -> str:
    """``--timeout S``, ``--wait`` or ``NAME``: how the option is written."""
    if not action.option_strings:
        return str(action.metavar or action.dest.upper())
    flags = ", ".join(action.option_strings)
    if action.nargs == 0:
        return flags
    choices = "{" + ",".join(map(str, action.choices)) + "}" if action.choices else None
    value = action.metavar or choices or action.dest.upper()
    return f"{flags} [{value}]" if action.nargs == "?" else f"{flags} {value}"


def cell(text: str) -> str:
    """``text`` in a Markdown table cell."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def options_table(parser: argparse.ArgumentParser) -> str:
    """A table of the parser's arguments: how each is written, its default and what it does."""
    rows = ["| argument | default | meaning |", "| --- | --- | --- |"]
    for action in parser._actions:  # argparse keeps its arguments there (sphinx-argparse reads it too)
        default = action.default
        shown = "" if default in (None, False, argparse.SUPPRESS) or action.nargs == "*" else f"`{default}`"
        meaning = action.help or ""
        rows.append(f"| `{option(action)}` | {shown} | {cell(meaning)} |")
    return "\n".join(rows)


def magics_reference() -> str:
    """The Markdown of the reference: a section per magic."""
    sections = []
    for name, prefix in magic_names():
        method = getattr(SamzaMagics, name)
        title = f"`%{name}` / `%%{name}`" if name in SamzaMagics.magics["cell"] and prefix == "%" else None
        section = [f"## {title or f'`{prefix}{name}`'}", ""]
        doc = inspect.getdoc(method) or ""
        parser = PARSERS.get(name)
        if parser is not None:
            usage = " ".join(parser.format_usage().removeprefix("usage: ").split())
            section += ["```text", f"{prefix}{usage}", "```", "", options_table(parser), ""]
            first, _, rest = doc.partition("\n\n")
            if USAGE.fullmatch(first):  # the docstring's own usage line: the parser's is above
                doc = rest
        section += [doc, ""]
        sections.append("\n".join(section))
    return "\n".join(sections)
