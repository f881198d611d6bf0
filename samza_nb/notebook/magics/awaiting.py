"""``%samza_run --wait`` in a Jupyter kernel waits without blocking the kernel's event loop.

A line magic is a plain call: while it blocks, ipykernel handles no message, so a dashboard's Stop button
(a widget message) would do nothing until the job ended. In a kernel, an input transformer therefore
rewrites the line ``%samza_run ... --wait ...`` into an ``await`` of :func:`run_and_wait`: the cell
becomes an awaiting cell (IPython's autoawait), the job starts on its own thread as usual, and the cell
waits on the kernel's loop, which keeps dispatching widget messages meanwhile (ipykernel dispatches comm
messages while an awaiting cell runs). The kernel's interrupt cancels an awaiting cell: that becomes a
graceful stop (see :meth:`~samza_nb.notebook.runs.job.JobRun.wait_async`). Outside a kernel (a terminal
IPython, tests' shells) the magic blocks as before.
"""

from __future__ import annotations

import ast
import re
import shlex
import sys
from types import FrameType
from typing import Any

_MAGIC_CALL = re.compile(
    r"get_ipython\(\)\.run_line_magic\('samza_run', (?P<args>'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\)"
)
_AWAIT = (
    "(await __import__('samza_nb.notebook.magics.awaiting', fromlist=['run_and_wait'])"
    ".run_and_wait(get_ipython(), {args}))"
)


def waits(args: str) -> bool:
    """True when the magic's argument line asks to ``--wait`` (comments ignored)."""
    try:
        return "--wait" in shlex.split(args, comments=True)
    except ValueError:
        return False  # a quoting mistake: the magic itself reports it


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.GeneratorExp)


def _top_level_magic_lines(source: str) -> set[int]:
    """Lines (1-based) of the cell holding a ``run_line_magic('samza_run', ...)`` call at the cell's top
    level, where an ``await`` is allowed: not inside a function, lambda, class or generator."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    lines: set[int] = set()

    def visit(node: ast.AST, nested: bool) -> None:
        nested = nested or isinstance(node, _SCOPES)
        if (
            not nested
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "run_line_magic"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "samza_run"
        ):
            lines.add(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child, nested)

    visit(tree, False)
    return lines


def _inside_cell_magic() -> bool:
    """True while a cell magic (``%%time``, ``%%capture``) runs its body: that body is compiled by the
    magic itself, where an ``await`` cannot go."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "run_cell_magic":
            return True
        frame = frame.f_back
    return False


class WaitRewriter:
    """IPython input transformer (after magics became calls): a ``%samza_run ... --wait`` line at the top
    level of a cell awaits instead of blocking. Left alone: inside a function, lambda or class, in the body
    of a cell magic, with ``%autoawait off``, and text inside string literals."""

    def __init__(self, shell: Any) -> None:
        self.shell = shell

    def __call__(self, lines: list[str]) -> list[str]:
        source = "".join(lines)
        if "run_line_magic('samza_run'" not in source or not getattr(self.shell, "autoawait", False):
            return lines
        if _inside_cell_magic():
            return lines
        targets = _top_level_magic_lines(source)
        if not targets:
            return lines

        def replace(match: re.Match[str]) -> str:
            literal = match.group("args")
            try:
                args = ast.literal_eval(literal)
            except (ValueError, SyntaxError):
                return match.group(0)
            return _AWAIT.format(args=literal) if isinstance(args, str) and waits(args) else match.group(0)

        return [
            _MAGIC_CALL.sub(replace, line) if number in targets else line
            for number, line in enumerate(lines, start=1)
        ]


def install(shell: Any) -> bool:
    """Install a :class:`WaitRewriter` on ``shell`` when it is a Jupyter kernel's shell; True when
    installed (once per shell)."""
    if getattr(shell, "kernel", None) is None:
        return False
    transformers = shell.input_transformers_post
    if not any(isinstance(t, WaitRewriter) for t in transformers):
        transformers.append(WaitRewriter(shell))
    return True


async def run_and_wait(shell: Any, line: str) -> None:
    """What an awaiting ``%samza_run --wait`` line runs: start the job, then wait on the kernel's loop.
    ``{name}`` and ``$name`` in ``line`` are expanded from the cell's variables, as ``run_line_magic``
    does for a line it runs."""
    from samza_nb.notebook.magics.registration import SamzaMagics

    line = shell.var_expand(line, depth=1)  # depth 1: the cell's frame, which awaits this coroutine

    magics = shell.magics_manager.registry.get(SamzaMagics.__name__)
    if not isinstance(magics, SamzaMagics):
        shell.run_line_magic("samza_run", line)
        return
    await magics.run_awaiting(line)


__all__ = ["WaitRewriter", "install", "run_and_wait", "waits"]
